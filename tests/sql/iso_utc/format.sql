-- iso_utc (internal) renders ISO-8601 UTC with microseconds and Z, whatever the session TimeZone.
begin;
select plan(5);

set local timezone = 'America/St_Johns';

select is(
    recording_finalize_internal.iso_utc('2026-11-30 12:14:34.123456+03'),
    '2026-11-30T09:14:34.123456Z',
    'converted to UTC with microseconds and a Z suffix'
);
select is(
    recording_finalize_internal.iso_utc('2026-01-01 00:00:00+00'), '2026-01-01T00:00:00.000000Z',
    'whole seconds keep six fraction digits (a fixed width)'
);
set local timezone = 'Pacific/Chatham';
select is(
    recording_finalize_internal.iso_utc('2026-11-30 12:14:34.123456+03'),
    '2026-11-30T09:14:34.123456Z',
    'the session TimeZone does not change the text'
);
select is(recording_finalize_internal.iso_utc(null), null, 'NULL in, NULL out');
select is(
    recording_finalize_internal.iso_utc('2026-11-30T09:14:34.123456Z')::timestamptz,
    '2026-11-30 09:14:34.123456+00'::timestamptz,
    'the text reads back as the same instant'
);

select * from finish();
rollback;
