-- Guards the invariant that Available and Failed are terminal, whoever writes the table.

create or replace function messenger.call_recordings_terminal_guard()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if old.status in ('Available', 'Failed') and new.status is distinct from old.status then
        raise exception using
            errcode = 'RF008',
            message = format(
                'recording %s is %s, a terminal status; it cannot become %s',
                old.id, old.status, new.status
            );
    end if;
    return new;
end
$$;

comment on function messenger.call_recordings_terminal_guard() is
'BEFORE UPDATE trigger of messenger.call_recordings: raises RF008 when an update would move a '
'recording out of Available or Failed. Applies to every writer, not only these functions. '
'The trigger call_recordings_terminal_guard is created by migration 0005; since 0013 its '
'WHEN condition (the same test) keeps this function off every other update.';

revoke all on function messenger.call_recordings_terminal_guard() from public;

-- The trigger itself is created by migration 0005, once: re-applying this file (every migrate)
-- replaces only the function and takes no lock on call_recordings.
