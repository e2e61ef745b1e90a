-- The one topic rule: the server's topic, whatever a caller passes (NULL means the server's).

create or replace function recording_finalize_internal.topic(
    p_topic text,
    p_server_topic text default null
)
returns text
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
    v_topic text := p_server_topic;
begin
    if v_topic is null then
        select s.topic into v_topic from recording_finalize.settings as s;
        if not found then
            raise exception using
                errcode = 'P0002',
                message = 'recording_finalize.settings has no row',
                hint = 'Restore its one row as the owner: insert into recording_finalize.settings '
                    'default values (then set the topic and bounds).';
        end if;
    end if;
    if p_topic is not null and p_topic <> v_topic then
        raise exception using
            errcode = 'RF009',
            column = 'topic',
            message = format('topic_mismatch: the caller''s topic is %s but the server''s topic '
                '(recording_finalize.settings) is %s', p_topic, v_topic),
            hint = 'Pass NULL (the server''s topic), or set RFR_TOPIC to the server''s topic.';
    end if;
    return v_topic;
end
$$;

comment on function recording_finalize_internal.topic(text, text) is
'Internal. The server''s topic (recording_finalize.settings.topic, or p_server_topic when the '
'caller has read the settings already). p_topic NULL means that topic; any other value raises '
'RF009 naming both (COLUMN field: topic). Every function that enqueues, leases, marks, counts '
'or explains events resolves its topic here (set_policy included), so no caller reaches another '
'topic. Read-only.';

revoke all on function recording_finalize_internal.topic(text, text) from public;
