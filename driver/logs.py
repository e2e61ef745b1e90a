"""One structured logger: a JSON object per line on stderr (``ts``, ``level``, ``event``, then the
caller's fields). URLs are cut to their scheme and registered secrets masked before a line is
written: no log line may carry an address, a credential or a binary.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sys
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import Enum
from typing import IO, Any, Protocol
from uuid import UUID

# scheme://anything-up-to-whitespace-or-quote; the scheme is kept so a reader sees what it was.
_URL = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*)://[^\s\"'<>]*")
_MAX_FIELD = 2000

_lock = threading.Lock()
#: The secrets, longest first (one that contains another is masked whole): sorted when a secret
#: is added, not for every line.
_longest_first: tuple[str, ...] = ()
_stream: IO[str] | None = None


def add_secrets(values: Iterable[str | None]) -> None:
    """Registers values that must never be printed (empty and very short ones are ignored)."""
    global _longest_first
    with _lock:
        # A one- or two-character "secret" would mangle every line; such a password is no
        # secret anyway.
        added = {v for v in values if v and len(v) >= 3}
        _longest_first = tuple(sorted(added.union(_longest_first), key=len, reverse=True))


def set_stream(stream: IO[str] | None) -> None:
    """Redirects the log (tests); None: the process's current stderr."""
    global _stream
    _stream = stream


def redact(text: str) -> str:
    """``text`` with URLs cut to their scheme and the registered secrets masked."""
    # Every line of every finalized row comes through here: the regular expression runs only on
    # a text that can hold a URL.
    for secret in _longest_first:
        if secret in text:
            text = text.replace(secret, "***")
    if "://" in text:
        text = _URL.sub(r"\1://…", text)
    if len(text) > _MAX_FIELD:
        text = text[:_MAX_FIELD] + "…"
    return text


def _plain(value: Any) -> Any:
    """A JSON-ready copy of ``value``; strings are redacted, bytes never printed."""
    # The usual fields first: strings, then identifiers and counts.
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, UUID):
        return str(value)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        # json.dumps would print NaN/Infinity, which is not JSON.
        return value if math.isfinite(value) else None
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(value)} bytes>"
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, Enum):
        return _plain(value.value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    return redact(str(value))


class LogFn(Protocol):
    """What takes a log line: ``log`` itself, or a test's stand-in with its signature."""

    def __call__(self, event: str, /, *, level: str = ..., **fields: Any) -> None: ...


def log(event: str, /, *, level: str = "info", **fields: Any) -> None:
    record: dict[str, Any] = {
        "ts": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "level": level,
        "event": redact(event),
    }
    for key, value in fields.items():
        record[key] = _plain(value)
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    with _lock:
        stream = _stream if _stream is not None else sys.stderr
        stream.write(line)
        stream.flush()


class _Forward(logging.Handler):
    """Hands the standard-library records of the libraries (psycopg_pool, botocore, yoyo) to
    ``log``, so stderr stays JSON lines and their messages are redacted like ours."""

    def emit(self, record: logging.LogRecord) -> None:
        log("library log", level=record.levelname.lower(), logger=record.name,
            message=record.getMessage())


def capture_library_logs() -> None:
    """Routes the root logger's warnings and errors through ``log``."""
    root = logging.getLogger()
    if not any(isinstance(h, _Forward) for h in root.handlers):
        root.addHandler(_Forward(logging.WARNING))
    root.setLevel(min(root.level or logging.WARNING, logging.WARNING))
