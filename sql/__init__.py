"""The SQL of recording-finalize-retry, shipped inside the wheel as ``recording_finalize.sql``.

No code: this file only makes ``sql/`` an importable package, so that ``recording-finalize
migrate`` finds ``migrations/`` and ``functions/`` through the installed package (editable or
not) instead of a path next to the source tree.
"""
