-- The one rule for the topic: the server's, whatever a caller passes (NULL means the server's).

create or replace function recording_finalize.our_topic(p_topic text)
returns text
language plpgsql
stable
set search_path = ''
as $$
declare
    v_topic text;
begin
    select s.topic into v_topic from recording_finalize.settings as s;
    if not found then
        raise exception using
            errcode = 'P0002',
            message = 'recording_finalize.settings has no row',
            hint = 'Restore its one row as the owner: insert into recording_finalize.settings '
                'default values (then set the topic and bounds).';
    end if;
    if p_topic is not null and p_topic <> v_topic then
        raise exception using
            errcode = 'RF009',
            message = format(
                'topic_mismatch: p_topic is %s but the server''s topic '
                '(recording_finalize.settings) is %s', p_topic, v_topic
            ),
            hint = 'Pass NULL (the server''s topic) or set RFR_TOPIC to the server''s topic.';
    end if;
    return v_topic;
end
$$;

comment on function recording_finalize.our_topic(text) is
'Internal. Returns the server''s topic (recording_finalize.settings.topic). p_topic NULL means '
'that topic; any other value that differs raises RF009 (topic_mismatch) naming both. Called '
'first by every function that takes p_topic, so no caller can write, lease or mark rows of '
'another topic. Read-only.';

revoke all on function recording_finalize.our_topic(text) from public;
