"""Operator tooling: one module per command, each with its ``cliutil.Command``.

``explain``, ``audit``, ``requeue`` (and ``retry``), ``pause`` (and ``resume``), ``prune``,
``status``, ``incidents`` (``storage-incident``) and ``dry_run`` (``run-once --dry-run``); their
SQL is in ``queries.py``, the S3 check they share (the cycle's ``Storage``) in ``s3.py``. Meant
for a login granted ``recording_finalize_operator``; the commands that write record who did it
(``--operator``, else the OS user) and why in ``messenger.recording_finalize_operator_actions``.

Tooling imports the core, never the other way round (``tests/py/test_layout.py``).
"""
