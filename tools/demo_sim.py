"""The demo's world: the messenger service, its media recorders, an S3 outage and an operator.

Everything here plays the *other* programs around the safety net, through the same doors they
use in production: the messenger service writes its own tables as their owner and calls the
product's lifecycle functions (``recording_finalize.recording_started`` …) as a login granted
``recording_finalize_service`` only, the recorders ``put_object`` the binary to S3 and the
service calls the ingest function, the operator runs the real ``recording-finalize`` CLI.
Nothing here touches the worker's own tables or functions.

Durations are compressed: the metadata says a call lasted minutes, the demo runs it in seconds.
"""

from __future__ import annotations

import heapq
import itertools
import math
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import boto3
import psycopg
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from psycopg_pool import ConnectionPool

from tools import stack

# Scenario keys, in report order.
HAPPY = "happy"
LATE = "late_callback"
LOST = "lost_callback"
NEVER = "never_uploaded"
CRASH = "crash"
BAD = "bad_metadata"
SCENARIOS = (HAPPY, LATE, LOST, NEVER, CRASH, BAD)
LABELS = {
    HAPPY: "happy path (upload + ingest callback)",
    LATE: "late callback (races the worker)",
    LOST: "lost callback, binary present",
    NEVER: "recorder never uploaded",
    CRASH: "crash between Available and enqueue",
    BAD: "unusable metadata, fixed by an operator",
}
# Shares of the non-happy scenarios; the rest is happy path. Unusable metadata is a fixed few.
SHARES = {LATE: 0.03, LOST: 0.09, NEVER: 0.06, CRASH: 0.06}
BAD_COUNT = 6
# Of the lost-callback, crash and never-uploaded calls, this share is due during the outage.
DUE_IN_OUTAGE_SHARE = 0.2
BAD_DURATIONS = ("-5", "NaN")

# The simulator's two fleets (thread-pool lanes of the Scheduler).
MESSENGER, RECORDER = "messenger", "recorder"
#: How many uploads the simulated recorders make at once (their scheduler's lanes).
RECORDER_LANES = 16
#: A recorder uploads its file this long after the call ended.
UPLOAD_DELAY_S = (0.2, 1.2)
#: A recorder whose upload failed keeps the file and retries: BASE doubling up to CAP, each
#: delay times U(1 - JITTER, 1 + JITTER). tools/demo.py derives the upload grace from it.
RETRY_BASE_S, RETRY_CAP_S, RETRY_JITTER = 0.2, 2.0, 0.5
#: The operator's fix upload is tried this often (a busy storage times out now and then).
OPERATOR_UPLOAD_TRIES = 10


def retry_delay(tries: int, rng: random.Random) -> float:
    """The recorder's wait after its ``tries``-th failed upload."""
    return min(RETRY_CAP_S, RETRY_BASE_S * 2 ** (tries - 1)) * rng.uniform(1 - RETRY_JITTER,
                                                                        1 + RETRY_JITTER)

BUCKET = "call-recordings"
KEY_TEMPLATE = "recordings/{recording_id}"
TOPIC = "pin.messenger.call-recording-available.v1"

# Container signatures, so the stand-in binaries look like what their Content-Type says.
_MAGIC = {
    "Webm": b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01webm",
    "Mp4": b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2",
    "Ogg": b"OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00OpusHead",
    "M4a": b"\x00\x00\x00\x18ftypM4A \x00\x00\x02\x00M4A mp42",
}
_AUDIO_FORMATS = (("Webm", "audio/webm;codecs=opus", 0.5), ("Ogg", "audio/ogg;codecs=opus", 0.3),
                  ("M4a", "audio/x-m4a", 0.2))
_VIDEO_FORMATS = (("Webm", "video/webm;codecs=vp8,opus", 0.6), ("Mp4", "video/mp4", 0.4))
_FILLER = random.Random(7).randbytes(64 * 1024)


@dataclass(frozen=True)
class Timeline:
    """When things happen, in seconds after the scenario starts."""

    sla_s: float
    spread_s: float = 44.0  # call endings are spread over [1, spread_s]
    outage_start_s: float = 18.0
    outage_s: float = 10.0
    operator_at_s: float = 34.0  # the operator fixes and requeues no earlier than this
    restart_allowance_s: float = 3.0  # how long S3 may take to stop and to come back

    @property
    def outage_end_s(self) -> float:
        return self.outage_start_s + self.outage_s

    def due_in_outage(self) -> tuple[float, float]:
        """Call endings whose binary is uploaded before the outage and whose SLA deadline
        falls inside it: they show what the worker does with due rows while S3 is down."""
        return self.outage_start_s - self.sla_s + 0.5, self.outage_start_s - 2.0

    def race_window(self) -> tuple[float, float]:
        """Call endings whose upload the outage may hold back past their SLA deadline.

        Their binary arrives after the deadline, so whether the worker's HEAD or the upload
        comes first is a race: such a recording may legitimately end Failed (Timeout). The plan
        keeps the scenarios whose outcome it promises (lost callback, crash, never uploaded,
        unusable metadata) out of it; happy-path calls end there as they would in real life,
        and the report classifies them by when their binary really arrived."""
        return (
            self.outage_start_s - 3.0,
            self.outage_end_s + self.restart_allowance_s - self.sla_s + 1.0,
        )


@dataclass
class Recording:
    """One simulated call or conference recording: the plan, then what the world did."""

    id: UUID
    session_id: UUID
    session_kind: str
    media_type: str
    trigger: str
    scenario: str
    end_at_s: float
    duration_s: int
    format: str
    content_type: str
    size_bytes: int
    meta_format: str | None  # the x-amz-meta-format the recorder writes; None: from Content-Type
    bad_duration: str | None
    chat_id: UUID | None
    deal_id: UUID | None
    tenant_id: UUID | None
    # What happened (wall-clock seconds, time.time()):
    ended_wall: float | None = None
    upload_tries: int = 0
    uploaded_wall: float | None = None
    callback_result: str | None = None
    callback_wall: float | None = None
    crash_applied: bool = False
    fixed_wall: float | None = None
    requeued_wall: float | None = None
    requeue_rc: int | None = None

    @property
    def key(self) -> str:
        return KEY_TEMPLATE.format(recording_id=self.id)


def _pick(rng: random.Random, options: tuple[tuple[str, str, float], ...]) -> tuple[str, str]:
    x = rng.random()
    for fmt, content_type, weight in options:
        x -= weight
        if x <= 0:
            return fmt, content_type
    return options[-1][0], options[-1][1]


def make_plan(n: int, timeline: Timeline, rng: random.Random) -> list[Recording]:
    """n recordings with scenarios, realistic metadata and ending times, sorted by ending."""
    counts = {s: round(n * share) for s, share in SHARES.items()}
    counts[BAD] = BAD_COUNT
    counts[HAPPY] = n - sum(counts.values())
    scenarios = [s for s, c in counts.items() for _ in range(c)]
    rng.shuffle(scenarios)
    race_lo, race_hi = timeline.race_window()

    plan: list[Recording] = []
    for i, scenario in enumerate(scenarios):
        if scenario == BAD:
            # Early, so the quarantine shows for a while before the operator steps in.
            end_at = rng.uniform(2.0, 6.0)
        elif scenario in (LOST, CRASH, NEVER) and rng.random() < DUE_IN_OUTAGE_SHARE:
            # Binary (if any) safely uploaded before the outage, SLA deadline inside it.
            end_at = rng.uniform(*timeline.due_in_outage())
        else:
            end_at = rng.uniform(1.0, timeline.spread_s)
            while scenario != HAPPY and race_lo <= end_at <= race_hi:
                end_at = rng.uniform(1.0, timeline.spread_s)
        kind = "Direct" if rng.random() < 0.7 else "Conference"
        video_share = 0.2 if kind == "Direct" else 0.65
        media = "Video" if rng.random() < video_share else "Audio"
        fmt, content_type = _pick(rng, _VIDEO_FORMATS if media == "Video" else _AUDIO_FORMATS)
        # Call lengths are log-normal around four minutes, from 15 s to 90 min.
        duration = int(min(5400, max(15, rng.lognormvariate(math.log(240), 0.9))))
        plan.append(Recording(
            id=uuid4(),
            session_id=uuid4(),
            session_kind=kind,
            media_type=media,
            trigger="Auto" if rng.random() < 0.6 else "Manual",
            scenario=scenario,
            end_at_s=end_at,
            duration_s=duration,
            format=fmt,
            content_type=content_type,
            # A truncated stand-in for the media file: real bytes, honest Content-Length.
            size_bytes=rng.randint(4 * 1024, 64 * 1024),
            meta_format=fmt.lower() if rng.random() < 0.85 else None,
            bad_duration=BAD_DURATIONS[i % 2] if scenario == BAD else None,
            chat_id=uuid4() if rng.random() < 0.9 else None,
            deal_id=uuid4() if rng.random() < 0.45 else None,
            tenant_id=uuid4() if rng.random() < 0.95 else None,
        ))
    plan.sort(key=lambda r: r.end_at_s)
    return plan


def body_for(rec: Recording) -> bytes:
    magic = _MAGIC[rec.format]
    return (magic + _FILLER)[: rec.size_bytes]


def metadata_for(rec: Recording, fixed: bool = False) -> dict[str, str]:
    """The x-amz-meta-* a recorder writes. ``bad_duration`` wins unless ``fixed``."""
    duration = rec.bad_duration if rec.bad_duration is not None and not fixed else None
    meta = {
        "duration-seconds": duration if duration is not None else str(rec.duration_s),
        "recording-id": str(rec.id),
        "session-id": str(rec.session_id),
        "codec": "opus" if rec.media_type == "Audio" else "vp8+opus",
    }
    if rec.meta_format is not None:
        meta["format"] = rec.meta_format
    return meta


def s3_client(env: dict[str, str]) -> Any:
    """The recorders' S3 client: no retries of its own (the recorder decides when to retry)."""
    config = Config(
        region_name=env.get("AWS_DEFAULT_REGION", "us-east-1"),
        connect_timeout=1.0,
        read_timeout=5.0,
        retries={"mode": "standard", "total_max_attempts": 1},
        max_pool_connections=32,
        s3={"addressing_style": "path"},
    )
    return boto3.session.Session(
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        region_name=env.get("AWS_DEFAULT_REGION", "us-east-1"),
    ).client("s3", endpoint_url=env["S3_ENDPOINT_URL"], config=config)


class Scheduler:
    """Runs callables at given monotonic times (a tiny event loop), each on its lane's thread
    pool: the messenger service and the recorders are separate fleets, so a burst of uploads
    never delays a session ending."""

    def __init__(self, lanes: dict[str, int], errors: list[str]) -> None:
        self._heap: list[tuple[float, int, str, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._cv = threading.Condition()
        self._pools = {lane: ThreadPoolExecutor(max_workers=n, thread_name_prefix=f"sim-{lane}")
                       for lane, n in lanes.items()}
        self._inflight = 0
        self._closed = False
        self._errors = errors
        self._thread = threading.Thread(target=self._loop, name="sim-scheduler", daemon=True)
        self._thread.start()

    def at(self, when: float, lane: str, fn: Callable[[], None]) -> None:
        with self._cv:
            heapq.heappush(self._heap, (when, next(self._seq), lane, fn))
            self._cv.notify()

    def later(self, delay: float, lane: str, fn: Callable[[], None]) -> None:
        self.at(time.monotonic() + delay, lane, fn)

    def idle(self) -> bool:
        with self._cv:
            return not self._heap and self._inflight == 0

    def _run(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as err:  # noqa: BLE001 - the demo reports it; the world goes on
            self._errors.append(f"{type(err).__name__}: {err}")
        finally:
            with self._cv:
                self._inflight -= 1
                self._cv.notify_all()

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._closed and (
                    not self._heap or self._heap[0][0] > time.monotonic()
                ):
                    timeout = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cv.wait(timeout)
                if self._closed:
                    return
                _, _, lane, fn = heapq.heappop(self._heap)
                self._inflight += 1
            self._pools[lane].submit(self._run, fn)

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        self._thread.join(5)
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class Outage:
    """The S3 outage as it really happened (wall clock)."""

    stop_called: float | None = None
    stopped: float | None = None
    start_called: float | None = None
    ready: float | None = None


@dataclass
class OperatorLog:
    started: float | None = None
    status_output: str = ""
    done: float | None = None
    # Each quarantined recording's own status when the operator found it: the domain must be
    # untouched by a quarantine (still Uploading).
    status_when_quarantined: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class World:
    """Drives the plan: session endings, uploads, callbacks, the crash, the outage, the operator."""

    def __init__(
        self,
        plan: list[Recording],
        timeline: Timeline,
        owner_url: str,
        worker_url: str,
        env: dict[str, str],
        stack_dir: Path,
        say: Callable[[str], None],
        rng: random.Random,
    ) -> None:
        self.plan = plan
        self.timeline = timeline
        self.env = env
        self.worker_url = worker_url
        self.stack_dir = stack_dir
        self.say = say
        self.rng = rng
        self.errors: list[str] = []
        self.outage = Outage()
        self.operator = OperatorLog()
        # The service's own table writes (session rows, the crashed ingest), as their owner.
        self.pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            owner_url, min_size=2, max_size=12, kwargs={"autocommit": True}, open=True
        )
        # The product's lifecycle and ingest functions, as the service's login
        # (recording_finalize_service: EXECUTE on those functions, no table privilege).
        self.service: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            env.get("RFR_DEMO_SERVICE_DATABASE_URL") or owner_url, min_size=2, max_size=12,
            kwargs={"autocommit": True}, open=True
        )
        self.s3 = s3_client(env)
        self.sched = Scheduler({MESSENGER: 8, RECORDER: RECORDER_LANES}, errors=self.errors)
        # The recorders' view of the storage: cleared on a failed upload, set again by a probe;
        # the operator waits for it (the uploads retry on their own backoff).
        self.storage_up = threading.Event()
        self.storage_up.set()
        self._probing = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._t0 = 0.0
        self.t0_wall = 0.0
        self._ended_lock = threading.Lock()
        self.ended = 0
        self._sla = timedelta(seconds=timeline.sla_s)

    # ---- set-up -------------------------------------------------------------------------------

    def setup(self) -> None:
        """Every call is in progress and recording when the scenario starts."""
        with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            for kind, table in (("Direct", "call_sessions"), ("Conference", "conference_sessions")):
                rows = [
                    (r.session_id, r.chat_id, r.deal_id, r.tenant_id,
                     timedelta(seconds=r.duration_s + self.rng.uniform(5, 60)))
                    for r in self.plan if r.session_kind == kind
                ]
                cur.executemany(
                    f"insert into messenger.{table} (id, chat_id, deal_id, tenant_id, started_at)"
                    " values (%s, %s, %s, %s, now() - %s)",
                    rows,
                )
        with self.service.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                "select recording_finalize.recording_started(%s, %s, %s, %s, %s)",
                [(r.id, r.session_kind, r.session_id, r.media_type, r.trigger) for r in self.plan],
            )

    # ---- the run ------------------------------------------------------------------------------

    def start(self, t0: float) -> None:
        """Starts the clock: ``t0`` is the scenario's start on the monotonic clock."""
        self._t0 = t0
        self.t0_wall = time.time() - (time.monotonic() - t0)
        for rec in self.plan:
            self.sched.at(t0 + rec.end_at_s, MESSENGER, partial(self._end_session, rec))
        for target, name in ((self._outage, "s3-outage"), (self._operate, "operator")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def done(self) -> bool:
        return self.sched.idle() and not any(t.is_alive() for t in self._threads) and (
            self.ended == len(self.plan)
        )

    def close(self) -> None:
        self.sched.close()
        for thread in self._threads:
            thread.join(1)
        self.pool.close()
        self.service.close()

    def _sleep_until(self, t_s: float) -> None:
        time.sleep(max(0.0, self._t0 + t_s - time.monotonic()))

    # ---- the messenger service and its recorders ---------------------------------------------

    def _end_session(self, rec: Recording) -> None:
        with self.service.connection() as conn:
            conn.execute(
                "select recording_finalize.session_ended(%s, %s, %s)",
                (rec.session_kind, rec.session_id, self._sla),
            )
        rec.ended_wall = time.time()
        with self._ended_lock:
            self.ended += 1
        if rec.scenario == NEVER:
            return  # the recorder died with the file: no upload, no callback
        # A recorder finishes its file and uploads it a moment after the call ends.
        self.sched.later(self.rng.uniform(*UPLOAD_DELAY_S), RECORDER, lambda: self._upload(rec))

    def _upload(self, rec: Recording) -> None:
        rec.upload_tries += 1
        try:
            self.s3.put_object(
                Bucket=BUCKET, Key=rec.key, Body=body_for(rec), ContentType=rec.content_type,
                Metadata=metadata_for(rec),
            )
        except (BotoCoreError, ClientError):
            # The recorder keeps the file and retries with its own backoff (retry_delay): after
            # the outage its upload lands somewhere in the next seconds, in a race with the
            # worker's HEAD. The probe only tells the operator.
            self.storage_up.clear()
            self._probe_storage()
            delay = retry_delay(rec.upload_tries, self.rng)
            self.sched.later(delay, RECORDER, lambda: self._upload(rec))
            return
        rec.uploaded_wall = time.time()
        self._after_upload(rec)

    def _after_upload(self, rec: Recording) -> None:
        if rec.scenario == HAPPY:
            self.sched.later(self.rng.uniform(0.05, 0.3), MESSENGER, lambda: self._callback(rec))
        elif rec.scenario == LATE:
            # The callback is held up (a stuck queue) until after the SLA: the worker may
            # finalize first, and the callback must then change nothing.
            assert rec.ended_wall is not None
            delay = rec.ended_wall + self.timeline.sla_s + self.rng.uniform(1.0, 4.0) - time.time()
            self.sched.later(max(0.0, delay), MESSENGER, lambda: self._callback(rec))
        elif rec.scenario == CRASH:
            self.sched.later(self.rng.uniform(0.05, 0.3), MESSENGER, lambda: self._crash(rec))
        # LOST and BAD: the callback never comes.

    def _callback(self, rec: Recording) -> None:
        with self.service.connection() as conn:
            row = conn.execute(
                "select recording_finalize.recording_ingest_completed(%s, %s, %s, %s, %s, %s)",
                (rec.id, rec.key, rec.size_bytes, rec.duration_s, rec.format, TOPIC),
            ).fetchone()
        rec.callback_result = str(row[0]) if row else None
        rec.callback_wall = time.time()

    def _crash(self, rec: Recording) -> None:
        """The buggy ingest: commits Available with the metadata, then dies before it enqueues
        the event or closes the finalize row (which stays Pending)."""
        with self.pool.connection() as conn:
            cur = conn.execute(
                "update messenger.call_recordings"
                " set status = 'Available', file_id = %s, size_bytes = %s,"
                " duration_seconds = %s, format = %s, available_at = now(),"
                " version = version + 1, updated_at = now()"
                " where id = %s and status = 'Uploading'",
                (rec.key, rec.size_bytes, rec.duration_s, rec.format, rec.id),
            )
        rec.crash_applied = cur.rowcount == 1

    def _probe_storage(self) -> None:
        """One prober at a time polls HeadBucket until the storage answers."""
        if not self._probing.acquire(blocking=False):
            return

        def probe() -> None:
            try:
                while True:
                    try:
                        self.s3.head_bucket(Bucket=BUCKET)
                    except (BotoCoreError, ClientError):
                        time.sleep(0.1)
                        continue
                    self.storage_up.set()
                    return
            finally:
                self._probing.release()

        threading.Thread(target=probe, name="recorder-probe", daemon=True).start()

    # ---- the S3 outage -----------------------------------------------------------------------

    def _outage(self) -> None:
        try:
            self._sleep_until(self.timeline.outage_start_s)
            self.say(f"S3: stopping the storage for {self.timeline.outage_s:.0f} s")
            self.outage.stop_called = time.time()
            stack.stop_service(self.stack_dir, "s3", verbose=False)
            self.outage.stopped = time.time()
            self._sleep_until(self.timeline.outage_end_s)
            self.say("S3: starting the storage again")
            self.outage.start_called = time.time()
            stack.start_service(self.stack_dir, "s3", verbose=False)
            self.outage.ready = time.time()
            self.say(f"S3: back after {self.outage.ready - self.outage.stop_called:.1f} s")
        except stack.StackError as err:
            self.errors.append(f"S3 outage: {err}")

    # ---- the operator ------------------------------------------------------------------------

    def _operate(self) -> None:
        """The runbook: look at `status`, fix each quarantined object, `requeue` it."""
        bad = [r for r in self.plan if r.scenario == BAD]
        if not bad:
            return
        self._sleep_until(self.timeline.operator_at_s)
        give_up = time.monotonic() + 30.0
        quarantined: set[str] = set()
        while time.monotonic() < give_up:
            with self.pool.connection() as conn:
                rows = conn.execute(
                    "select f.recording_id::text, r.status"
                    " from messenger.recording_finalize_attempts as f"
                    " join messenger.call_recordings as r on r.id = f.recording_id"
                    " where f.status = 'Quarantined' and f.recording_id = any(%s)",
                    ([r.id for r in bad],),
                ).fetchall()
            self.operator.status_when_quarantined = {row[0]: row[1] for row in rows}
            quarantined = set(self.operator.status_when_quarantined)
            if len(quarantined) == len(bad) and self.storage_up.is_set():
                break
            time.sleep(0.5)
        else:
            self.operator.notes.append(
                f"only {len(quarantined)} of {len(bad)} unusable-metadata rows were quarantined"
            )
        self.operator.started = time.time()
        status = self._cli("status")
        self.operator.status_output = status.stdout
        self.say("operator: `recording-finalize status` shows the quarantined rows:")
        for line in status.stdout.rstrip().splitlines():
            self.say(f"    {line}")
        for rec in bad:
            if str(rec.id) not in quarantined:
                continue
            # The fix: the recorder's file is re-uploaded with the metadata it should have had
            # (again, as a recorder would, when a busy storage times out).
            for tries in itertools.count(1):
                try:
                    self.s3.put_object(
                        Bucket=BUCKET, Key=rec.key, Body=body_for(rec),
                        ContentType=rec.content_type, Metadata=metadata_for(rec, fixed=True),
                    )
                    break
                except (BotoCoreError, ClientError):
                    if tries == OPERATOR_UPLOAD_TRIES:
                        raise
                    time.sleep(retry_delay(tries, self.rng))
            rec.fixed_wall = time.time()
            result = self._cli("requeue", str(rec.id), "--operator", "demo-operator",
                               "--reason", "object re-uploaded with usable metadata")
            rec.requeue_rc = result.returncode
            rec.requeued_wall = time.time()
            if result.returncode != 0:
                self.operator.notes.append(
                    f"requeue {rec.id} exited {result.returncode}: {result.stderr.strip()}"
                )
        self.operator.done = time.time()
        fixed = sum(1 for r in bad if r.requeue_rc == 0)
        self.say(f"operator: fixed the metadata of {fixed} object(s) in S3 and ran "
                 f"`recording-finalize requeue RECORDING_ID` for each")

    def _cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        # The runbook's own login (recording_finalize_operator): no table privilege either.
        env["DATABASE_URL"] = self.env.get("RFR_DEMO_OPERATOR_DATABASE_URL") or self.worker_url
        exe = Path(sys.executable).parent / "recording-finalize"
        return subprocess.run(
            [str(exe), *args], env=env, capture_output=True, text=True, timeout=30, check=False
        )
