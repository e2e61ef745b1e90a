"""Operator tooling: one module per command, each with its ``cliutil.Command``; their SQL in
``queries.py``, the S3 check they share in ``s3.py``. It imports the core, never the other way
round (``tests/py/test_layout.py``).
"""
