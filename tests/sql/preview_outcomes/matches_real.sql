-- preview_outcomes says what claim_due + apply_outcome then do, for every verdict x storage
-- incident (none / a worker incident closed within the grace / open of source worker / open of
-- source recorders) x attempts before the claim (0, the first check / max - 1, the last / max,
-- exhausted), with max attempts 3: preview first, then the real cycle on the same rows,
-- compared row by row (claim action, result, status, attempts, due time, detail).
-- 6 x 4 x 3 = 72 rows.
begin;
select plan(7);

create temp table matrix_verdicts (verdict text primary key, v jsonb);
insert into matrix_verdicts values
    ('found', '{"outcome": "found", "file_id": "recordings/ok", "size_bytes": 10,
        "duration_seconds": 5, "format": "Webm"}'),
    ('found_bad', '{"outcome": "found", "file_id": "https://x/y", "size_bytes": 10,
        "duration_seconds": 5, "format": "Webm"}'),
    ('missing', '{"outcome": "missing"}'),
    ('transient', '{"outcome": "transient", "error": "ReadTimeout"}'),
    ('invalid_metadata', '{"outcome": "invalid_metadata", "error": "duration NaN"}'),
    ('config_error', '{"outcome": "config_error", "error": "NoSuchBucket"}');

create function pg_temp.round(p_state text)
returns table (state text, verdict text, attempts_before integer, side text,
    claim_action text, result text, finalize_status text, attempts integer,
    next_attempt_at timestamptz, detail text)
language plpgsql
as $$
declare
    v_verdicts jsonb;
begin
    perform tests.clean_slate();
    perform tests.use_policy(3, '30 minutes', '30 minutes');
    drop table if exists pg_temp.round_rows, pg_temp.round_preview, pg_temp.round_claim,
        pg_temp.round_apply;
    if p_state = 'closed_within_grace' then
        insert into recording_finalize.storage_incidents (source, started_at, ended_at, closed_by)
        values ('worker', now() - interval '3 hours', now() - interval '10 minutes', 'tests');
    elsif p_state = 'open_worker' then
        insert into recording_finalize.storage_incidents (source, started_at)
        values ('worker', now() - interval '20 minutes');
    elsif p_state = 'open_recorders' then
        insert into recording_finalize.storage_incidents (source, started_at)
        values ('recorders', now() - interval '20 minutes');
    end if;
    create temp table round_rows as
    select m.verdict, a.attempts_before, tests.make_stuck(p_attempts => a.attempts_before) as rec,
        m.v
    from matrix_verdicts as m cross join (values (0), (2), (3)) as a (attempts_before);
    v_verdicts := (select jsonb_agg(r.v || jsonb_build_object('recording_id', r.rec))
        from round_rows as r);

    -- First the preview...
    create temp table round_preview as
    select * from recording_finalize.preview_outcomes(v_verdicts);
    -- ...then the real cycle.
    create temp table round_claim as select * from recording_finalize.claim_due(100);
    create temp table round_apply as
    select c.recording_id, x.*
    from round_claim as c join round_rows as r on r.rec = c.recording_id
    cross join lateral recording_finalize.apply_outcome(c.recording_id, c.claim_token,
        r.v ->> 'outcome', r.v ->> 'file_id', (r.v ->> 'size_bytes')::bigint,
        (r.v ->> 'duration_seconds')::integer, r.v ->> 'format', r.v ->> 'error') as x
    where c.action = 'reconcile';

    return query
    select p_state, r.verdict, r.attempts_before, 'preview'::text, p.claim_action, p.result,
        p.finalize_status, p.attempts, p.next_attempt_at, p.detail
    from round_rows as r join round_preview as p on p.recording_id = r.rec
    union all
    select p_state, r.verdict, r.attempts_before, 'real', c.action,
        case when c.action = 'reconcile' then a.result else c.action end,
        f.status::text, f.attempts,
        case when f.status = 'Pending' then f.next_attempt_at end,
        case when c.action = 'reconcile' then a.detail else c.detail end
    from round_rows as r
    left join round_claim as c on c.recording_id = r.rec
    left join round_apply as a on a.recording_id = r.rec
    left join messenger.recording_finalize_attempts as f on f.recording_id = r.rec;
end
$$;

create temp table compared as select * from pg_temp.round('none');
insert into compared select * from pg_temp.round('closed_within_grace');
insert into compared select * from pg_temp.round('open_worker');
insert into compared select * from pg_temp.round('open_recorders');

select results_eq(
    'select side, count(*) from compared group by side order by side',
    $$values ('preview', 72::bigint), ('real', 72::bigint)$$,
    '72 rows previewed, 72 run for real'
);
select is_empty(
    $$select state, verdict, attempts_before, claim_action, result, finalize_status, attempts,
        next_attempt_at, detail from compared where side = 'preview'
    except
    select state, verdict, attempts_before, claim_action, result, finalize_status, attempts,
        next_attempt_at, detail from compared where side = 'real'$$,
    'every preview row is what the real cycle then did (claim action, result, status, '
    'attempts, due time, detail)'
);
select is_empty(
    $$select state, verdict, attempts_before, claim_action, result from compared
    where side = 'real'
    except
    select state, verdict, attempts_before, claim_action, result from compared
    where side = 'preview'$$,
    'and the real cycle did nothing the preview did not say'
);

-- The matrix reaches every verdict result and the claim's own quarantine.
select set_eq(
    $$select distinct result from compared where side = 'real'$$,
    $$values ('reconciled'), ('failed'), ('deferred_by_incident'), ('backoff'),
        ('held_by_incident'), ('quarantined'), ('config_error_released')$$,
    'the matrix covers reconciled, failed, deferred_by_incident, backoff, held_by_incident, '
    'quarantined and config_error_released'
);
select results_eq(
    $$select distinct claim_action, result, finalize_status, attempts from compared
    where attempts_before = 3$$,
    $$values ('quarantined', 'quarantined', 'Quarantined', 3)$$,
    'at max attempts the claim quarantines, whatever the verdict or the incident'
);
select results_eq(
    $$select state, result, attempts from compared
    where side = 'real' and verdict = 'transient' and attempts_before = 2 order by state$$,
    $$values ('closed_within_grace', 'quarantined', 3), ('none', 'quarantined', 3),
        ('open_recorders', 'quarantined', 3), ('open_worker', 'held_by_incident', 2)$$,
    'the last transient attempt: quarantined, except while the worker''s own incident is open'
);
select results_eq(
    $$select state, result, attempts from compared
    where side = 'real' and verdict = 'missing' and attempts_before = 2 order by state$$,
    $$values ('closed_within_grace', 'deferred_by_incident', 2), ('none', 'failed', 3),
        ('open_recorders', 'deferred_by_incident', 2), ('open_worker', 'deferred_by_incident', 2)$$,
    'a 404: failed only without an incident overlapping the window'
);

select * from finish();
rollback;
