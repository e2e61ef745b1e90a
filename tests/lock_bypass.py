"""A runner under another single-runner lock key, for the tests that need two runners the lock
does not keep apart (SKIP LOCKED and the status guard must then prevent double work on their own).

The key is fixed in the product (``recording_finalize.config.DEFAULT_LOCK_KEY``; RFR_LOCK_KEY was
retired), so this runs the console script's ``main`` in a Python whose settings carry another key.
Prefix the argv of a ``recording-finalize`` process with ``with_lock_key(key)``: the script's path
and the command follow as usual and are passed on.
"""

from __future__ import annotations

import sys

# The key is set on the loaded settings (a dataclass default is bound when the class is made,
# so changing DEFAULT_LOCK_KEY after the import would change nothing).
_RUN = """\
import dataclasses, sys
import recording_finalize.config as config
_load = config.load_settings
key = int(sys.argv[1])
config.load_settings = lambda *a, **k: dataclasses.replace(_load(*a, **k), lock_key=key)
from recording_finalize.cli import main
sys.exit(main(sys.argv[3:]))
"""


def with_lock_key(key: int) -> list[str]:
    """The argv prefix: ``[python, -c, <run>, key]``; then the script's path, then its args."""
    return [sys.executable, "-c", _RUN, str(key)]
