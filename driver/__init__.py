"""recording-finalize-retry: the thin Python driver around the SQL API in ``sql/``.

Data flows one way — config → cycle (claim → check → apply) → relay → metrics; see
``docs/driver-design.md``.
"""

__version__ = "0.5.0.dev0"
