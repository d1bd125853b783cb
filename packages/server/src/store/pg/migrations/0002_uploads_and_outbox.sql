-- Uploads and fetched media count against an account's storage quota on every node; completion
-- webhooks wait in an outbox written with the task's ending.

-- Bytes of media the account holds: its uploads and the holds of its running tasks.
ALTER TABLE account ADD COLUMN media_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE account ADD CONSTRAINT account_media_not_negative CHECK (media_bytes >= 0);

-- An upload with its bytes as they arrived (any node may decode them).
CREATE TABLE upload (
  id            text   PRIMARY KEY,
  owner_id      text   NOT NULL REFERENCES account (id),
  filename      text   NOT NULL,
  content_type  text   NOT NULL,
  size_bytes    bigint NOT NULL CHECK (size_bytes >= 0),
  created_at    bigint NOT NULL,
  bytes         bytea  NOT NULL
);
CREATE INDEX upload_owner ON upload (owner_id);

-- Media fetched from a mediaUrl, counted while its task runs.
CREATE TABLE media_hold (
  id          text   PRIMARY KEY,
  account_id  text   NOT NULL REFERENCES account (id),
  size_bytes  bigint NOT NULL CHECK (size_bytes >= 0)
);

-- The outbox: one delivery per task that asked for a webhook, made in the transaction that ended it.
CREATE TABLE webhook_delivery (
  event_id    text   PRIMARY KEY,
  task_id     text   NOT NULL UNIQUE REFERENCES task (id),
  url         text   NOT NULL,
  created_at  bigint NOT NULL,
  attempts    json   NOT NULL DEFAULT '[]',
  outcome     text   NOT NULL DEFAULT 'pending' CHECK (outcome IN ('pending', 'delivered', 'failed', 'refused')),
  -- A sender holds a pending delivery until then (ms since the epoch); 0: no one holds it.
  held_until  bigint NOT NULL DEFAULT 0,
  seq         bigserial NOT NULL
);
CREATE INDEX webhook_delivery_pending ON webhook_delivery (seq) WHERE outcome = 'pending';
