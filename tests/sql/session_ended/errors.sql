-- session_ended: RF001 for a bad kind or SLA, RF004 for an unknown session.
begin;
select plan(6);

select tests.clean_slate();
select tests.make_session('Direct', null) as session \gset
create temp table before as select tests.snapshot() as fingerprint;

select throws_ok(
    format($$select recording_finalize.session_ended('Group', %L)$$, :'session'),
    'RF001', null, 'an unknown session kind is refused'
);
select throws_ok(
    format($$select recording_finalize.session_ended(null, %L)$$, :'session'),
    'RF001', null, 'a null session kind is refused'
);
select throws_ok(
    format($$select recording_finalize.session_ended('Direct', %L, interval '0')$$, :'session'),
    'RF001', null, 'a zero SLA is refused'
);
select throws_ok(
    format($$select recording_finalize.session_ended('Direct', %L)$$, gen_random_uuid()),
    'RF004', null, 'an unknown call session is refused'
);
select throws_ok(
    format($$select recording_finalize.session_ended('Conference', %L)$$, :'session'),
    'RF004', null, 'a call session id is not a conference session'
);
select is(tests.snapshot(), (select fingerprint from before), 'nothing changed');

select * from finish();
rollback;
