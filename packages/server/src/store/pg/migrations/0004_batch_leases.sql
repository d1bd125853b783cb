-- Batch work survives its node: a batch task is run under a lease that any node may take over once it
-- has passed, from the media kept in the database (docs/protocol.md "PostgreSQL engine", "Batch leases").

-- Where a batch task's media is: {"kind":"upload","uploadId":...,"trackIndex":n} or
-- {"kind":"hold","holdId":...,"trackIndex":n}. NULL for realtime tasks and for batch tasks created before
-- this migration (a node that claims one of those fails it: its media is not in the database).
ALTER TABLE task ADD COLUMN source json;

-- The lease: the node running the task, the fencing token of its claim (grows by one per claim, so a
-- write carrying an older token is refused), and until when the claim holds (the database's clock:
-- every node measures leases by one clock). A NULL expiry: never claimed; free.
ALTER TABLE task ADD COLUMN lease_node text;
ALTER TABLE task ADD COLUMN lease_token bigint NOT NULL DEFAULT 0;
ALTER TABLE task ADD COLUMN lease_expires_at timestamptz;
CREATE INDEX task_runnable ON task (seq) WHERE kind = 'batch' AND status IN ('QUEUED', 'PROCESSING', 'RECONCILING');

-- Media fetched from a mediaUrl is kept with its hold while its task runs, so a node that takes the
-- task over reads the same bytes the first node fetched (never the URL again: it may have changed,
-- gone, or answer differently, and a fetch would bill another copy against the quota).
ALTER TABLE media_hold ADD COLUMN content_type text;
ALTER TABLE media_hold ADD COLUMN bytes bytea;

-- Batch tasks running when this migration is applied were started by servers that hold no leases (an
-- older version, perhaps still running during a rolling upgrade): they are left to them for ten minutes
-- before any server may claim them (and fail them: their media was not recorded with them).
UPDATE task SET lease_expires_at = now() + interval '10 minutes'
WHERE kind = 'batch' AND status IN ('QUEUED', 'PROCESSING', 'RECONCILING');
