-- Republish discovery looks before it republishes: an outbox that deletes what it delivered
-- (MassTransit, NServiceBus, CAP) shows the product only its pending events, so "no event in
-- service_events" stops meaning "never enqueued". discover_unpublished now judges, before
-- opening any row, how many recently Available recordings the port does not show; when that is
-- more than a crash between committing Available and enqueueing the event explains, it holds
-- (opens nothing) and says so. Its judgement is kept here, beside where discovery goes on.
-- Additive only: a worker of the previous release ignores these columns.

set local lock_timeout = '1s';
set local statement_timeout = '1min';

alter table recording_finalize.discovery_sweep add column republish_window interval null;
alter table recording_finalize.discovery_sweep add column republish_judged_at timestamptz null;
alter table recording_finalize.discovery_sweep add column republish_sampled integer null;
alter table recording_finalize.discovery_sweep add column republish_unshown integer null;
alter table recording_finalize.discovery_sweep add column republish_held_since timestamptz null;
alter table recording_finalize.discovery_sweep add column republish_not_before timestamptz null;

comment on column recording_finalize.discovery_sweep.republish_window is
'The window the last discover_unpublished call was given (RFR_REPUBLISH_WINDOW; 0: republish '
'discovery off; NULL: never called).';
comment on column recording_finalize.discovery_sweep.republish_judged_at is
'When discover_unpublished last judged whether service_events can be believed (it judges only '
'when it has recordings to republish).';
comment on column recording_finalize.discovery_sweep.republish_sampled is
'How many recently Available recordings without an event of the product''s that judgement read.';
comment on column recording_finalize.discovery_sweep.republish_unshown is
'How many of them had no event, neither in service_events nor the product''s outbox.';
comment on column recording_finalize.discovery_sweep.republish_held_since is
'Since when republish discovery has been held because service_events does not show what the '
'service delivered (NULL: not held).';
comment on column recording_finalize.discovery_sweep.republish_not_before is
'When the last hold ended: discovery never republishes a recording that became Available '
'before it (those the hold kept back may have been delivered).';
