import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { NodeRow, RealtimeSessionRow, Store, TaskError, TaskRow } from '../store.js';
import type { PgAccess } from './connection.js';
import { TERMINAL_SQL } from './rows.js';

/** What the sweeper of dead nodes' sessions needs of the rest of the engine. */
export interface NodeTasks {
  get(id: string): Promise<TaskRow | undefined>;
  fail(id: string, error: TaskError, now: number): Promise<TaskRow | 'already' | unknown>;
}

const OPEN_SESSIONS_SQL = `SELECT count(*) AS n FROM realtime_session s JOIN task t ON t.id = s.task_id
  WHERE s.account_id = $1 AND s.open AND t.status NOT IN (${TERMINAL_SQL})`;

/**
 * The registry (migrations/0003_nodes.sql). Heartbeats and ages are the database's now(), so the
 * nodes' own clocks never decide whether a node is alive.
 */
export function pgNodes(db: PgAccess, tasks: NodeTasks): Store['nodes'] {
  return {
    register: async (node: { id: string; internalUrl: string; publicUrl: string }): Promise<void> => {
      await db.query(
        `INSERT INTO node (id, internal_url, public_url) VALUES ($1, $2, $3)
         ON CONFLICT (id) DO UPDATE SET internal_url = $2, public_url = $3, started_at = now(), heartbeat_at = now(), draining = false`,
        [node.id, node.internalUrl, node.publicUrl],
      );
    },
    heartbeat: async (id: string, node: { internalUrl: string; publicUrl: string }): Promise<void> => {
      await db.query(
        `INSERT INTO node (id, internal_url, public_url) VALUES ($1, $2, $3)
         ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
        [id, node.internalUrl, node.publicUrl],
      );
    },
    setDraining: async (id: string): Promise<void> => {
      await db.query('UPDATE node SET draining = true WHERE id = $1', [id]);
    },
    leave: async (id: string): Promise<void> => {
      await db.query('DELETE FROM node WHERE id = $1', [id]);
    },
    list: async (): Promise<readonly NodeRow[]> => (await db.query<NodeSql>(`SELECT ${NODE_COLUMNS} FROM node n ORDER BY id`, [])).map(nodeFrom),
    socketTokenSecret: async (): Promise<Buffer> => {
      // The first node to ask makes it; a node racing it reads the one that won.
      await db.query("INSERT INTO cluster_secret (name, value) VALUES ('socket_token', $1) ON CONFLICT (name) DO NOTHING", [randomBytes(32)]);
      const r = await db.query<{ value: Buffer }>("SELECT value FROM cluster_secret WHERE name = 'socket_token'", []);
      return (r[0] as { value: Buffer }).value;
    },
    session: async (id: string): Promise<RealtimeSessionRow | undefined> => {
      const r = await db.query<{ id: string; task_id: string; account_id: string; node_id: string } & Partial<Record<'n_id', string | null>> & Partial<NodeSql>>(
        `SELECT s.id, s.task_id, s.account_id, s.node_id, n.id AS n_id, n.internal_url, n.public_url, n.draining,
                (extract(epoch FROM now() - n.heartbeat_at) * 1000)::float8 AS age_ms
         FROM realtime_session s LEFT JOIN node n ON n.id = s.node_id WHERE s.id = $1`,
        [id],
      );
      const row = r[0];
      if (row === undefined) return undefined;
      const node = row.n_id === null || row.n_id === undefined ? undefined : nodeFrom({ ...(row as NodeSql), id: row.n_id });
      return { id: row.id, taskId: row.task_id, accountId: row.account_id, nodeId: row.node_id, node };
    },
    closeSession: async (id: string): Promise<void> => {
      await db.query('UPDATE realtime_session SET open = false WHERE id = $1 AND open', [id]);
    },
    moveSession: async (id: string, nodeId: string): Promise<void> => {
      await db.query('UPDATE realtime_session SET node_id = $2 WHERE id = $1', [id, nodeId]);
    },
    openSessions: async (accountId: string): Promise<number> => {
      const r = await db.query<{ n: bigint }>(OPEN_SESSIONS_SQL, [accountId]);
      return Number(r[0]?.n ?? 0n);
    },
    orphanedSessions: async (staleAfterMs: number, nodeId: string): Promise<readonly RealtimeSessionRow[]> => {
      const rows = await db.query<{ id: string; task_id: string; account_id: string; node_id: string }>(
        `SELECT s.id, s.task_id, s.account_id, s.node_id FROM realtime_session s JOIN task t ON t.id = s.task_id LEFT JOIN node n ON n.id = s.node_id
         WHERE t.kind = 'realtime' AND t.status NOT IN (${TERMINAL_SQL})
           AND (n.id IS NULL OR n.id = $2 OR n.heartbeat_at < now() - make_interval(secs => $1::float8 / 1000))
         ORDER BY t.seq`,
        [staleAfterMs, nodeId],
      );
      return rows.map((r) => ({ id: r.id, taskId: r.task_id, accountId: r.account_id, nodeId: r.node_id, node: undefined }));
    },
    failOrphanedSessions: async (staleAfterMs: number, error: (task: TaskRow) => TaskError, now: number): Promise<readonly string[]> => {
      const orphans = await db.query<{ id: string; task_id: string }>(
        `SELECT s.id, s.task_id FROM realtime_session s JOIN task t ON t.id = s.task_id LEFT JOIN node n ON n.id = s.node_id
         WHERE t.kind = 'realtime' AND t.status NOT IN (${TERMINAL_SQL}) AND (n.id IS NULL OR n.heartbeat_at < now() - make_interval(secs => $1::float8 / 1000))
         ORDER BY t.seq`,
        [staleAfterMs],
      );
      const failed: string[] = [];
      for (const orphan of orphans) {
        await db.query('UPDATE realtime_session SET open = false WHERE id = $1', [orphan.id]);
        // failTask locks the task: two sweepers on two nodes fail it once.
        const task = await tasks.get(orphan.task_id);
        if (task === undefined) continue;
        if ((await tasks.fail(task.id, error(task), now)) !== 'already') failed.push(task.id);
      }
      return failed;
    },
  };
}

/** Open sessions of the account: not closed, task not ended (an ended task needs no closing write). */
export async function countOpen(c: pg.PoolClient, accountId: string): Promise<number> {
  const r = await c.query<{ n: bigint }>(OPEN_SESSIONS_SQL, [accountId]);
  return Number(r.rows[0]?.n ?? 0n);
}

interface NodeSql {
  readonly id: string;
  readonly internal_url: string;
  readonly public_url: string;
  readonly draining: boolean;
  readonly age_ms: number;
}

const NODE_COLUMNS = 'n.id, n.internal_url, n.public_url, n.draining, (extract(epoch FROM now() - n.heartbeat_at) * 1000)::float8 AS age_ms';

function nodeFrom(r: NodeSql): NodeRow {
  return { id: r.id, internalUrl: r.internal_url, publicUrl: r.public_url, heartbeatAgeMs: Math.max(0, Number(r.age_ms)), draining: r.draining };
}
