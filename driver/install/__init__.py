"""Install tooling: ``migrate`` (``migrate.py``) and its bookkeeping SQL (``queries.py``).

The schema drift check that ``migrate`` shares with the running worker (start-up, ``/readyz``)
is the core's ``drift.py``. Tooling imports the core, never the other way round
(``tests/py/test_layout.py``).
"""
