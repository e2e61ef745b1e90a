"""One vocabulary: the state machine's words are declared once, by
``recording_finalize_internal.vocabulary()``, and the adapter's ports by
``recording_finalize_internal.adapter_ports()``; every other copy is compared with them here,
against a migrated database, so that a word added or dropped in one place fails this file:

- the CHECKs of ``messenger.recording_finalize_attempts`` (status, last_outcome,
  quarantine_reason);
- the deciders, by what they answer: ``claim_decision`` and ``outcome_decision`` evaluated over a
  grid of inputs that reaches each of their branches, plus the words ``claim_due`` and
  ``apply_outcome`` answer themselves (the no-ops of a race);
- what ``apply_outcome``, ``preview_outcomes`` and ``quarantined_rows`` accept and refuse;
- the driver: ``model.VERDICTS``, ``cycle``'s counting tables, ``ops.explain.RESULT_WORDS``,
  ``ops.requeue.REASON_CODES``, ``metrics.QUARANTINE_REASONS``, ``adapter.VIEWS`` and
  ``adapter.FUNCTIONS``;
- the reference adapter as migrate installs it (its views' columns and its functions'
  arguments, from the catalog).

And the cycle stops, naming it, on a word it does not know.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import psycopg
import pytest
from conftest import Db
from recording_finalize import adapter, cycle, metrics, model, queries
from recording_finalize.ops import explain, requeue


def words(db: Db, kind: str) -> set[str]:
    found = {str(w) for (w,) in db.all(
        "select word from recording_finalize_internal.vocabulary() where kind = %s", (kind,))}
    assert found, f"the vocabulary declares no {kind}"
    return found


def check_words(db: Db, constraint: str) -> set[str]:
    """The words of an enumeration CHECK (``col::text = any('{A,B}'::text[])``)."""
    [definition] = db.one(
        "select pg_get_constraintdef(oid) from pg_constraint where conname = %s", (constraint,))
    match = re.search(r"'\{([^}]*)\}'", definition)
    assert match, definition
    return set(match.group(1).split(","))


def source_of(db: Db, function: str) -> str:
    return str(db.one("select prosrc from pg_proc where oid = %s::regproc", (function,))[0])


def test_each_kind_declared_once_with_its_meaning(db: Db) -> None:
    rows = db.all("select kind, word, meaning from recording_finalize_internal.vocabulary()")
    pairs = [(kind, word) for kind, word, _ in rows]
    assert len(pairs) == len(set(pairs)), "a word declared twice"
    assert all(meaning and meaning.strip() for _, _, meaning in rows)
    assert {kind for kind, _ in pairs} == {
        "verdict", "apply_result", "claim_action", "quarantine_reason", "finalize_status"}


def test_finalize_status_is_the_tables_check(db: Db) -> None:
    assert words(db, "finalize_status") == check_words(
        db, "recording_finalize_attempts_status_ck")


# --- verdicts -----------------------------------------------------------------------------------

def test_verdicts_everywhere(db: Db) -> None:
    verdicts = words(db, "verdict")
    assert check_words(db, "recording_finalize_attempts_last_outcome_ck") == verdicts
    assert set(model.VERDICTS) == verdicts
    assert len(model.VERDICTS) == len(verdicts)
    nobody = uuid.uuid4()
    with db.connect() as conn:
        for verdict in verdicts:
            # No finalize row: accepted, and a no-op.
            [row] = conn.execute("select result from recording_finalize.apply_outcome("
                                 "%s, %s, %s)", (nobody, nobody, verdict)).fetchall()
            assert row[0] == "stale", verdict
            conn.execute("select * from recording_finalize.preview_outcomes(%s::jsonb)", (
                f'[{{"recording_id": "{nobody}", "outcome": "{verdict}"}}]',))
        for call in ("select * from recording_finalize.apply_outcome(%s, %s, 'lost')",
                     "select * from recording_finalize.preview_outcomes(jsonb_build_array("
                     "jsonb_build_object('recording_id', %s::text, 'outcome', 'lost')))"):
            params = (nobody, nobody) if "apply_outcome" in call else (nobody,)
            with pytest.raises(psycopg.Error) as refused:
                conn.execute(call, params)
            assert refused.value.sqlstate == "RF001"


# --- what the deciders answer -------------------------------------------------------------------

#: claim_decision over a grid that reaches every branch: (action, quarantine_reason) pairs.
CLAIM_GRID = """
    select distinct d.action, d.quarantine_reason
    from (values (null::text), ('Uploading'), ('Available'), ('Failed')) as rs (status)
    cross join (values (true), (false)) as ev (enqueued)
    cross join (values (true), (false)) as sf (found)
    cross join (values (null::timestamptz), (now() - interval '1 day'), (now())) as se (ended)
    cross join (values (0), (8)) as a (attempts)
    cross join (values (null::text), ('transient')) as lo (last_outcome)
    cross join lateral recording_finalize_internal.claim_decision(
        rs.status, ev.enqueued, sf.found, se.ended, a.attempts, lo.last_outcome, 8,
        interval '30 minutes', now()) as d
"""

#: outcome_decision over a grid that reaches every branch (the incidents as the caller left them).
OUTCOME_GRID = """
    select distinct d.result, d.quarantine_reason
    from (select word from recording_finalize_internal.vocabulary()
          where kind = 'verdict') as o (outcome)
    cross join (values (null::text), ('format is not one of Webm, Mp4, Ogg, M4a')) as m (problem)
    cross join (values (1), (8)) as a (attempts)
    cross join (values (null::boolean), (true), (false)) as b (confirmed)
    cross join (values (null::integer, null::integer, null::integer), (0, 2, 0)) as k (
        found, known_missing, known_other)
    cross join lateral recording_finalize_internal.outcome_decision(
        o.outcome, m.problem, 'e', a.attempts, 8, now() - interval '1 hour',
        interval '30 minutes', interval '1 day', now(), b.confirmed, k.found, k.known_missing,
        k.known_other) as d
"""


def claim_decisions(db: Db) -> set[tuple[str, str | None]]:
    return {(str(a), r) for a, r in db.all(CLAIM_GRID)}


def outcome_decisions(db: Db) -> set[tuple[str, str | None]]:
    """With no incident, then with the worker's own storage incident open (in a transaction
    that is rolled back): the incident branches answer only then."""
    with db.connect() as conn:
        found = {(str(r), q) for r, q in conn.execute(OUTCOME_GRID)}
        with pytest.raises(_RolledBack), conn.transaction():
            conn.execute("insert into recording_finalize.storage_incidents "
                         "(source, started_at, reason) values "
                         "('worker', now() - interval '2 hours', 'transient HEADs')")
            found |= {(str(r), q) for r, q in conn.execute(OUTCOME_GRID)}
            raise _RolledBack
    return found


class _RolledBack(Exception):
    pass


def literals(source: str, pattern: str) -> set[str]:
    return set(re.findall(pattern, source))


def test_claim_actions_everywhere(db: Db) -> None:
    actions = words(db, "claim_action")
    decided = {action for action, _ in claim_decisions(db)}
    assert decided <= actions, f"claim_decision answers words not declared: {decided - actions}"
    # claim_due's own words (a republish the service is writing at that moment).
    own = literals(source_of(db, "recording_finalize.claim_due"), r"action := '(\w+)'")
    assert own <= actions, f"claim_due answers words not declared: {own - actions}"
    assert decided | own == actions, f"declared but never answered: {actions - decided - own}"
    # The driver counts each one (reconcile rows are checked and applied instead).
    assert set(cycle._AT_CLAIM) | {"reconcile"} == actions
    # What moves the heartbeat is words of the state machine too.
    assert actions | words(db, "apply_result") >= cycle.SETTLED


def test_apply_results_everywhere(db: Db) -> None:
    results = words(db, "apply_result")
    decided = {result for result, _ in outcome_decisions(db)}
    assert decided <= results, f"outcome_decision answers words not declared: {decided - results}"
    own = literals(source_of(db, "recording_finalize.apply_outcome"),
                   r"'(\w+)' as result\b|result := '(\w+)'|returning '(\w+)'")
    own_words = {w for group in own for w in group if w}
    assert own_words <= results, f"apply_outcome answers words not declared: {own_words - results}"
    assert decided | own_words == results, (
        f"declared but never answered: {results - decided - own_words}")
    # The driver counts each one; explain words each one a preview can show (what
    # outcome_decision decides: the no-ops of a race cannot be previewed).
    assert set(cycle._BY_RESULT) == results
    assert set(explain.RESULT_WORDS) == decided


def test_quarantine_reasons_everywhere(db: Db) -> None:
    reasons = words(db, "quarantine_reason")
    assert check_words(db, "recording_finalize_attempts_quarantine_reason_ck") == reasons
    decided = {r for _, r in claim_decisions(db) | outcome_decisions(db) if r is not None}
    own = literals(source_of(db, "recording_finalize.apply_outcome"),
                   r"'(\w+)' as quarantine_reason")
    assert decided | own == reasons
    assert set(model.QUARANTINE_REASONS) == reasons
    assert set(requeue.REASON_CODES) == reasons
    assert set(metrics.QUARANTINE_REASONS) == reasons | {"unknown"}
    with db.connect() as conn:
        for reason in reasons:
            conn.execute("select * from recording_finalize.quarantined_rows(1, %s, null)",
                         (reason,))
        with pytest.raises(psycopg.Error) as refused:
            conn.execute("select * from recording_finalize.quarantined_rows(1, 'bored', null)")
        assert refused.value.sqlstate == "RF001"


# --- the adapter's ports ------------------------------------------------------------------------

def ports(db: Db) -> dict[str, tuple[str, tuple[str, ...], tuple[str, ...], str | None, bool]]:
    return {str(port): (str(kind), tuple(names), tuple(types), result, bool(optional))
            for port, kind, names, types, result, optional in db.all(
                "select port, kind, names, types, result_type, optional "
                "from recording_finalize_internal.adapter_ports()")}


def test_driver_ports_are_the_declared_ones(db: Db) -> None:
    declared = ports(db)
    required = {p: v for p, v in declared.items() if not v[4]}
    views = {p: tuple(zip(v[1], v[2], strict=True)) for p, v in required.items()
             if v[0] == "view"}
    functions = {p: (v[2], v[3]) for p, v in required.items() if v[0] == "function"}
    assert views == adapter.VIEWS
    assert functions == adapter.FUNCTIONS
    assert {p for p, v in declared.items() if v[4]} == {
        "start_recording", "hold_session", "end_session", "make_uploading"}


def test_reference_adapter_holds_every_declared_port(db: Db) -> None:
    """The reference adapter as migrate installed it: each port with the declared columns (in
    any order, extra ones allowed) or arguments (names and types in order) and result."""
    schema = adapter.SCHEMA
    columns: dict[str, dict[str, str]] = {}
    for view, column, type_name in db.all(
            "select c.relname, a.attname, format_type(a.atttypid, a.atttypmod) "
            "from pg_class c join pg_attribute a on a.attrelid = c.oid "
            "where c.relnamespace = %s::regnamespace and c.relkind = 'v' and a.attnum > 0 "
            "and not a.attisdropped", (schema,)):
        columns.setdefault(view, {})[column] = type_name
    functions: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {}
    for name, arg_names, arg_types, result in db.all(
            "select p.proname, coalesce(p.proargnames, '{}'), "
            "array(select format_type(t, null) from unnest(p.proargtypes) as t), "
            "format_type(p.prorettype, null) "
            "from pg_proc p where p.pronamespace = %s::regnamespace", (schema,)):
        functions[name] = (tuple(arg_names), tuple(arg_types), result)
    for port, (kind, names, types, result, _) in ports(db).items():
        if kind == "view":
            assert port in columns, port
            for name, type_name in zip(names, types, strict=True):
                assert columns[port].get(name) == type_name, (port, name)
        else:
            assert functions.get(port) == (names, types, result), port


# --- an unknown word stops the cycle ------------------------------------------------------------

def _row(action: str) -> model.ClaimedRow:
    return model.ClaimedRow(recording_id=uuid.uuid4(), session_kind="Direct",
                            session_id=uuid.uuid4(), action=action, attempts=1,
                            claim_token=None, recording_version=None, detail=None)


def test_an_unknown_apply_result_stops_the_cycle_naming_it() -> None:
    summary = cycle.CycleSummary(job_run_id="j", as_of=None)  # type: ignore[arg-type]
    ctx: Any = None  # never reached: the word is refused before anything is counted
    with pytest.raises(model.UnknownWord, match="'rescued'"):
        cycle._record(ctx, _row("reconcile"), model.Verdict(model.FOUND),
                      queries.AppliedResult("rescued", 1), summary)


def test_an_unknown_claim_action_stops_the_cycle_naming_it() -> None:
    summary = cycle.CycleSummary(job_run_id="j", as_of=None)  # type: ignore[arg-type]
    ctx: Any = None
    # A reconcile row is the caller's; the unknown word after it is refused.
    with pytest.raises(model.UnknownWord, match="claim_due action 'parked'"):
        cycle._settled_at_claim(ctx, [_row("reconcile"), _row("parked")], summary)
