"""Install tooling: ``migrate`` (``migrate.py``) and its bookkeeping SQL (``queries.py``),
``service-sql`` (``service_sql.py``), ``uninstall`` (``uninstall.py``) and ``wait-for-schema``
(``wait.py``).

The schema drift check and the contract with the service's tables, which the running worker
asks too (start-up, ``/readyz``), are the core's ``drift.py`` and ``contract.py``. Tooling
imports the core, never the other way round (``tests/py/test_layout.py``).
"""
