-- Several service nodes on one database: the registry of nodes, which node each realtime session
-- lives on, and the secret every node signs socket tokens with.

-- A node: where the others reach it, when it last beat (the database's clock), whether it drains.
CREATE TABLE node (
  id            text        PRIMARY KEY,
  internal_url  text        NOT NULL,
  public_url    text        NOT NULL,
  started_at    timestamptz NOT NULL DEFAULT now(),
  heartbeat_at  timestamptz NOT NULL DEFAULT now(),
  draining      boolean     NOT NULL DEFAULT false
);

-- A realtime session and its owner node (no foreign key to node: a node that left keeps its sessions'
-- rows, which the sweeper then fails). `open` is false once the session finishes or its recovery
-- window passes; an ended task ends it too.
CREATE TABLE realtime_session (
  id          text    PRIMARY KEY,
  task_id     text    NOT NULL UNIQUE REFERENCES task (id),
  account_id  text    NOT NULL REFERENCES account (id),
  node_id     text    NOT NULL,
  open        boolean NOT NULL DEFAULT true
);
CREATE INDEX realtime_session_account_open ON realtime_session (account_id) WHERE open;
CREATE INDEX realtime_session_node ON realtime_session (node_id);
-- Running realtime tasks: the sweeper starts from these (few), not from every session ever made.
CREATE INDEX task_running_realtime ON task (id) WHERE kind = 'realtime' AND status NOT IN ('COMPLETED', 'PARTIAL', 'FAILED');

-- Secrets shared by every node (socket_token: the HMAC key of socket tokens), made once.
CREATE TABLE cluster_secret (
  name   text  PRIMARY KEY,
  value  bytea NOT NULL
);
