"""Install tooling: ``migrate``, ``service-sql``, ``uninstall``, ``wait-for-schema``. It imports
the core (``drift``, ``contract``), never the other way round (``tests/py/test_layout.py``).
"""
