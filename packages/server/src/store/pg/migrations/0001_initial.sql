-- The service's state in PostgreSQL (packages/server/src/store/pg/pg-store.ts). Times are milliseconds
-- since the epoch (bigint), as the service keeps them; counts of Characters are bigint. Options,
-- transcripts and errors are `json`, not `jsonb`: an exact copy of what was written (jsonb refuses
-- the escape \u0000, which user text in options may hold, and reorders keys).

-- Accounts' character ledgers. The columns are the truth every check reads (with the row locked);
-- ledger_entry below is the audit trail of every change to them.
CREATE TABLE account (
  id              text PRIMARY KEY,
  plan_key        text   NOT NULL,
  period_ends_at  bigint NOT NULL,
  monthly_total   bigint NOT NULL,
  monthly_used    bigint NOT NULL,
  order_total     bigint NOT NULL,
  order_used      bigint NOT NULL,
  reserved        bigint NOT NULL DEFAULT 0,
  CONSTRAINT account_counts_not_negative CHECK (monthly_total >= 0 AND order_total >= 0 AND monthly_used >= 0 AND order_used >= 0 AND reserved >= 0),
  -- Never overspent: the last line of defence behind the locked checks in TypeScript.
  CONSTRAINT account_available_not_negative CHECK (monthly_total - monthly_used + order_total - order_used - reserved >= 0)
);

-- Append-only: one row per change of an account's used or reserved Characters, written in the same
-- transaction as the change, so SUM of the deltas equals the account's columns.
CREATE TABLE ledger_entry (
  id                  bigserial PRIMARY KEY,
  account_id          text   NOT NULL REFERENCES account (id),
  task_id             text,
  kind                text   NOT NULL CHECK (kind IN ('seed', 'reserve', 'accrue', 'settle', 'release')),
  delta_reserved      bigint NOT NULL,
  delta_monthly_used  bigint NOT NULL,
  delta_order_used    bigint NOT NULL,
  node_id             text   NOT NULL,
  at                  timestamptz NOT NULL DEFAULT now()
);
-- A task is settled or released once, whichever store (node) gets there first.
CREATE UNIQUE INDEX ledger_entry_once ON ledger_entry (task_id, kind) WHERE kind IN ('settle', 'release');
CREATE INDEX ledger_entry_account ON ledger_entry (account_id);

CREATE SEQUENCE voice_id_seq START 100001;
CREATE TABLE voice (
  id               bigint PRIMARY KEY,
  owner_id         text REFERENCES account (id),
  name             text    NOT NULL,
  type             text    NOT NULL CHECK (type IN ('system', 'clone', 'design')),
  feature          text    NOT NULL,
  channel          text    NOT NULL,
  file_count       integer NOT NULL,
  total_file_size  bigint  NOT NULL,
  ord              bigserial NOT NULL   -- creation order (listings)
);
CREATE INDEX voice_owner ON voice (owner_id);

-- Seeded design ids; each can be saved as a voice once, by its account.
CREATE TABLE design (
  id          text PRIMARY KEY,
  account_id  text    NOT NULL REFERENCES account (id),
  saved       boolean NOT NULL DEFAULT false
);

-- Seeded covers are computed from the access keys; only their deletion is kept.
CREATE TABLE cover_deleted (
  cover_id    text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES account (id)
);

CREATE TABLE task (
  id                    text PRIMARY KEY,
  owner_id              text   NOT NULL REFERENCES account (id),
  kind                  text   NOT NULL CHECK (kind IN ('batch', 'realtime')),
  model_id              text   NOT NULL,
  title                 text   NOT NULL,
  language_hint         text   NOT NULL,
  request_id            text   NOT NULL,
  options               json,
  status                text   NOT NULL,
  detected_language     text,
  audio_duration_ms     bigint NOT NULL,
  transcript            json,
  error                 json,
  billing_state         text   NOT NULL CHECK (billing_state IN ('RESERVED', 'SETTLED', 'RELEASED', 'ACCRUING')),
  plan_key              text   NOT NULL,
  reserved              bigint NOT NULL,
  settled               bigint NOT NULL,
  released              bigint NOT NULL,
  billable_duration_ms  bigint NOT NULL,
  created_at            bigint NOT NULL,
  updated_at            bigint NOT NULL,
  completed_at          bigint,
  seq                   bigserial NOT NULL,   -- creation order (History pages)
  CONSTRAINT task_money_not_negative CHECK (reserved >= 0 AND settled >= 0 AND released >= 0),
  -- A finished reservation is split exactly into what was charged and what was given back.
  CONSTRAINT task_reservation_split CHECK (billing_state IN ('RESERVED', 'ACCRUING') OR reserved = settled + released)
);
CREATE INDEX task_history ON task (owner_id, seq DESC);

-- A transcription create's Idempotency-Key, its body hash and the task it made.
CREATE TABLE idempotency_key (
  scope       text NOT NULL,
  key         text NOT NULL,
  body_hash   text NOT NULL,
  task_id     text NOT NULL REFERENCES task (id),
  request_id  text NOT NULL,
  PRIMARY KEY (scope, key)
);
