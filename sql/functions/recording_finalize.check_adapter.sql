-- What would make the worker fail at run time, found beneath the adapter before any row is
-- touched: reads, row-level security, what discovery reads, and a rehearsal of the writes in a
-- subtransaction that is always rolled back.

create or replace function recording_finalize.check_adapter(p_rehearse boolean default true)
returns table (severity text, port text, problem text, fix text)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
-- The rehearsal locks one recording without waiting (SKIP LOCKED) and waits on nothing else for
-- long: the service's transactions come first.
set lock_timeout = '50ms'
set statement_timeout = '10s'
set enable_seqscan = off
as $$
#variable_conflict use_column
declare
    v_view text;
    v_rel record;
    v_rec record;
    v_state text;
    v_message text;
    v_detail text;
    v_moved boolean;
    v_step text;
    v_read record;
    v_shown_before boolean;
    v_reading boolean;
    v_unreadable boolean := false;
begin
    -- 1. Each view reads, every column of it (a privilege it lacks beneath it, a table's or a
    -- column's, is 42501 here, not at run time).
    foreach v_view in array array(
        select p.port from recording_finalize_internal.adapter_ports() as p
        where p.kind = 'view' and not p.optional order by p.port
    ) loop
        begin
            execute format('select * from recording_finalize_adapter.%I limit 1', v_view);
        exception when others then
            get stacked diagnostics v_state = returned_sqlstate, v_message = message_text;
            severity := 'error';
            port := 'recording_finalize_adapter.' || v_view;
            problem := format('reading it fails: %s %s', v_state, v_message);
            v_unreadable := true;
            fix := 'grant the product''s owner role what the message names '
                '(recording-finalize service-sql grants --to ROLE)';
            return next;
        end;
    end loop;

    -- 2. Row-level security on a table beneath a view: the view reads it as the product's owner,
    -- so a policy that does not show that role every row hides recordings from the worker.
    for v_rel in
        select distinct v.relname as view_name, t.oid, n.nspname, t.relname
        from pg_catalog.pg_class as v
        join pg_catalog.pg_rewrite as w on w.ev_class = v.oid
        join pg_catalog.pg_depend as d on d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
            and d.objid = w.oid and d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
        join pg_catalog.pg_class as t on t.oid = d.refobjid and t.oid <> v.oid
        join pg_catalog.pg_namespace as n on n.oid = t.relnamespace
        where v.relnamespace = 'recording_finalize_adapter'::pg_catalog.regnamespace
            and v.relkind = 'v'
            and t.relrowsecurity
            and not (t.relowner = (select r.oid from pg_catalog.pg_roles as r
                    where r.rolname = current_user) and not t.relforcerowsecurity)
            and not (select r.rolbypassrls from pg_catalog.pg_roles as r
                where r.rolname = current_user)
            and not exists (
                select from pg_catalog.pg_policy as p
                where p.polrelid = t.oid and p.polpermissive and p.polcmd in ('r', '*')
                    and pg_catalog.pg_get_expr(p.polqual, p.polrelid) = 'true'
                    and (p.polroles = '{0}' or exists (
                        select from pg_catalog.unnest(p.polroles) as g (role)
                        where pg_catalog.pg_has_role(current_user, g.role, 'MEMBER')))
            )
    loop
        severity := 'error';
        port := 'recording_finalize_adapter.' || v_rel.view_name;
        problem := format('row-level security on %I.%I hides rows from %s: the worker would '
            'find nothing there', v_rel.nspname, v_rel.relname, current_user);
        -- The statements service-sql grants prints for it, word for word.
        fix := format('drop policy if exists recording_finalize_all_rows on %1$I.%2$I; '
            'create policy recording_finalize_all_rows on %1$I.%2$I as permissive for all to '
            '%3$I using (true) with check (true); (service-sql grants prints it; leave out in '
            'the view what the product must not see)', v_rel.nspname, v_rel.relname,
            current_user);
        return next;
    end loop;

    -- 3. A service_events whose published_at is the constant NULL shows pending events only: an
    -- outbox that deletes what it delivered. Republish discovery cannot tell a delivered event
    -- from a lost one there, and holds; said before the first cycle, unless republish discovery
    -- is off (its last window 0).
    if recording_finalize_internal.service_events_pending_only()
        and (select d.republish_window from recording_finalize.discovery_sweep as d)
            is distinct from interval '0'
    then
        severity := 'warning';
        port := 'recording_finalize_adapter.service_events';
        problem := 'its published_at is always NULL: it shows pending events only, so a '
            'recording whose event the service delivered looks never enqueued; republish '
            'discovery holds (sends nothing) until republishing is turned off or the port '
            'keeps delivered events';
        fix := 'when the service enqueues its event in the transaction that makes the recording '
            'Available (a transactional outbox), set RFR_REPUBLISH_WINDOW=0; otherwise map '
            'service_events onto something that keeps delivered events too';
        return next;
    end if;

    if not p_rehearse then
        return;
    end if;

    -- 4. What discovery and the event lookup read, judged by the rows their executed plans read
    -- beyond what they return (an index that still reads the whole history is no index for
    -- them), and, since enable_seqscan is off here, by a sequential scan no index could avoid.
    -- The discovery scans are discovery's own functions (inlined, so the query planned is
    -- theirs; here with constants, in discovery with its parameters), over a slice of
    -- discovery's default size and a window of two days. The queries are read-only and run
    -- under this function's statement_timeout.
    foreach v_step in array array[
        'select r.id from recording_finalize_internal.active_recordings_after(null, null, 1000) '
            'as r',
        'select r.id from recording_finalize_internal.available_recordings_after('
            'now() - interval ''2 days'', now(), now() - interval ''2 days'', null, 1000) as r',
        'select e.recording_id from recording_finalize_adapter.service_events as e '
            'where e.recording_id = ''' || gen_random_uuid() || '''::uuid'
    ] loop
        begin
            select * into v_read from recording_finalize_internal.rows_read(v_step);
            if v_read.rows_read - v_read.rows_returned
                    > greatest(1000, 10 * v_read.rows_returned)
                or cardinality(v_read.whole_scans) > 0
            then
                severity := 'warning';
                if v_step like '%service_events%' then
                    port := 'recording_finalize_adapter.service_events';
                    problem := format('the lookup of one recording''s event reads %s rows%s: '
                        'it runs for every recording the product finalizes or republishes',
                        v_read.rows_read, case when cardinality(v_read.whole_scans) > 0
                            then ' (the whole of ' || array_to_string(v_read.whole_scans, ', ')
                                || ')' else '' end);
                    fix := 'an index beneath the view on the column or expression it gives as '
                        'recording_id (for an id inside a JSON body: an expression index on '
                        'that path, partial to the event''s type)';
                else
                    port := 'recording_finalize_adapter.recordings';
                    problem := format('discovery reads %s rows to return %s%s, for: %s',
                        v_read.rows_read, v_read.rows_returned,
                        case when cardinality(v_read.whole_scans) > 0
                            then ' (the whole of ' || array_to_string(v_read.whole_scans, ', ')
                                || ')' else '' end,
                        case when v_step like '%available_recordings_after%'
                            then 'the Available recordings by available_at '
                                '(recording_finalize_internal.available_recordings_after)'
                            else 'the active recordings by (session_kind, session_id) '
                                '(recording_finalize_internal.active_recordings_after)' end);
                    fix := case when v_step like '%available_recordings_after%'
                        then 'an index on available_at of the Available recordings beneath the '
                            'view, partial to status = ''Available'' (service-sql recommended)'
                        else 'a (unique) index on (session_kind, session_id) of the active '
                            'recordings beneath the view, with the same WHERE as the view (where '
                            'the view computes session_id in a sub-select: an index partial to '
                            'the active statuses, as the view writes them, on the table''s own '
                            'session key)'
                        end;
                end if;
                return next;
            end if;
        exception when others then
            null;  -- a view that does not read is step 1's finding
        end;
    end loop;

    -- 5. The rehearsal: each write the worker makes, on one real active recording, in a
    -- subtransaction that ends by raising, so that whatever it did is rolled back (the row lock
    -- included). What the catalog cannot show shows here: a NOT NULL column without a default,
    -- a CHECK, a trigger whose own writes need a privilege, a policy that hides the row. It
    -- reads the views: one that cannot be read was said above, and would fail every step again.
    if v_unreadable then
        return;
    end if;
    foreach v_step in array array['make_failed', 'make_available', 'enqueue_realtime'] loop
        begin
            -- Until the recording is read, a failure is the recordings view's, not the port's.
            v_reading := true;
            select r.id, r.status, r.session_kind, r.session_id into v_rec
            from recording_finalize_adapter.recordings as r
            where r.status = any('{Pending,Recording,Uploading}'::text[])
            limit 1
            for no key update skip locked;
            if not found then
                severity := 'notice';
                port := 'recording_finalize_adapter.' || v_step;
                problem := 'not rehearsed: no active recording to rehearse on';
                fix := null;
                return next;
                continue;
            end if;
            v_reading := false;
            v_shown_before := exists (select from recording_finalize_adapter.service_events
                as e where e.recording_id = v_rec.id);
            v_moved := case v_step
                when 'make_failed' then recording_finalize_adapter.make_failed(
                    v_rec.id, v_rec.status, 'Timeout', now())
                when 'make_available' then recording_finalize_adapter.make_available(
                    v_rec.id, v_rec.status, 'recordings/' || v_rec.id, 1, 1, 'Webm', now())
                else true
            end;
            if v_step = 'enqueue_realtime' then
                perform recording_finalize_adapter.enqueue_realtime('RecordingFailed',
                    v_rec.session_kind, v_rec.session_id, v_rec.id,
                    jsonb_build_object('recordingId', v_rec.id, 'status', 'Failed',
                        'reason', 'Timeout'));
            end if;
            -- A port that shows a recording as soon as make_available moved it would hide the
            -- event of every recording the product rescues.
            if v_step = 'make_available' and v_moved and not v_shown_before and exists (
                select from recording_finalize_adapter.service_events as e
                where e.recording_id = v_rec.id)
            then
                severity := 'error';
                port := 'recording_finalize_adapter.service_events';
                problem := format('shows recording %s as soon as make_available moved it to '
                    'Available (in the same transaction): it would hide the event of every '
                    'recording the product rescues', v_rec.id);
                fix := 'map service_events onto the service''s own event rows (its outbox), '
                    'not onto the recordings'' status';
                return next;
            end if;
            if not v_moved then
                severity := 'error';
                port := 'recording_finalize_adapter.' || v_step;
                problem := format('did not move recording %s from %s although the recordings '
                    'view shows it so (row-level security on UPDATE, a rule, or a WHERE that '
                    'differs from the view)', v_rec.id, v_rec.status);
                fix := 'let the port write every row the recordings view shows';
                return next;
            end if;
            raise exception using errcode = 'RF0R0', message = 'rehearsal rolled back';
        exception
            when sqlstate 'RF0R0' then
                null;
            when others then
                get stacked diagnostics v_state = returned_sqlstate, v_message = message_text,
                    v_detail = pg_exception_context;
                severity := 'error';
                port := 'recording_finalize_adapter.' || case when v_reading then 'recordings'
                    else v_step end;
                problem := format(case when v_reading
                    then 'reading an active recording to rehearse the writes on fails: %s %s'
                    else 'a rehearsed write fails: %s %s' end, v_state, v_message);
                fix := case
                    when v_state = '42501' then 'grant the privilege the message names to '
                        || current_user || ' (recording-finalize service-sql grants --to '
                        || current_user || '); a trigger''s own writes need it too'
                    when v_state = '23502' then 'give the column a default, or set it in the port'
                    when v_state like '23%' then 'make the port write values the constraint takes'
                    when v_state = '55P03' then 'the service held the rows: run the check again'
                    else 'fix the port or what lies beneath it (context: '
                        || pg_catalog.left(v_detail, 200) || ')'
                end;
                return next;
                -- The next ports would read the same recording and fail the same way.
                exit when v_reading;
        end;
    end loop;
end
$$;

comment on function recording_finalize.check_adapter(boolean) is
'Finds what would make the worker fail at run time beneath the adapter (schema '
'recording_finalize_adapter), before any row is touched: a view that cannot be read (42501) '
'and row-level security that hides rows from the product''s owner; a service_events whose '
'published_at is the constant NULL (pending events only) while republish discovery is not off '
'(warning); with p_rehearse also the '
'discovery scans and the service_events lookup judged by the rows their executed plans read '
'beyond what they return (warning, with the index that serves it), and each write port '
'(make_failed, make_available, enqueue_realtime) rehearsed on one active recording in a '
'subtransaction that is always rolled back: a missing privilege (the port''s or a trigger''s), '
'a NOT NULL column without a default, a CHECK, a port that does not move a row the view '
'shows, and a service_events that shows a recording as soon as make_available moved it (it '
'would hide the product''s own events). No active recording: a notice per write port that it '
'was not rehearsed. One row per finding: severity error, warning or notice, the port, the '
'problem and its fix. Locks: one active recording FOR NO KEY UPDATE SKIP LOCKED for the few '
'milliseconds of the rehearsal (never waits for it; lock_timeout 50 ms for anything else); '
'triggers of the service fire and are rolled back; a sequence a write draws from advances. '
'Worker and operator API (SECURITY DEFINER); migrate calls it too.';

revoke all on function recording_finalize.check_adapter(boolean) from public;
grant execute on function recording_finalize.check_adapter(boolean)
to recording_finalize_worker, recording_finalize_operator;
