import pg from 'pg';
import type { TaskRow } from '../store.js';

/** The NOTIFY channel every task write announces itself on (pg-store.ts writeTask), payload `<nodeId> <taskId>`. */
export const TASK_CHANNEL = 'soundclone_task';

export interface TaskFeedOptions {
  readonly connectionString: string;
  /** This store's node id: its own notifications are skipped (its listeners heard the change already). */
  readonly nodeId: string;
  /** Reads the current rows of these tasks (missing ones left out). */
  readonly read: (ids: readonly string[]) => Promise<readonly TaskRow[]>;
  /** How often the tasks someone listens to are read again anyway (ms): what a lost notification would have said. */
  readonly pollMs: number;
  readonly connectTimeoutMs: number;
  /** The wait before reconnect attempt `attempt` (from 1): default capped exponential with full jitter. */
  readonly reconnectDelayMs?: (attempt: number) => number;
  /** Failures of the listening connection or of a read: told here, never thrown. */
  readonly onError?: (error: Error) => void;
}

/** 100 ms doubling up to 5 s, full jitter. */
export function defaultReconnectDelayMs(attempt: number): number {
  return Math.random() * Math.min(5000, 100 * 2 ** Math.min(attempt, 16));
}

/**
 * Task changes made by any node, for the listeners of this one (Store.events.onTaskChanged on
 * PostgreSQL). Three paths, so a change is heard even when one of them fails:
 *
 *   this node's own writes  --told()-------------------------------> listeners (at once)
 *   another node's write    --NOTIFY soundclone_task--> read row ---> listeners (tens of ms)
 *   anything missed         --every pollMs: read watched rows-------> listeners (at most pollMs late)
 *
 * A row is passed on only when it differs from the last one seen for that task, so the three paths
 * never repeat a change. The first row seen (read when the first listener of a task subscribes) is the
 * baseline, not told: a listener hears changes, and reads the row itself for where it stands
 * (tasks.ts waitForTerminal does), so a change made before the baseline was read is in what it read. The LISTEN connection is opened with the first listener; when it drops (the
 * database restarted) it is opened again after a growing, jittered delay, and the watched rows are read
 * at once on reconnect. Nothing here throws into the process: every failure goes to onError.
 */
export class TaskFeed {
  private readonly listeners = new Map<string, Set<(row: TaskRow) => void>>();
  /** Task id -> the last row told, as a signature. */
  private readonly last = new Map<string, string>();
  private client: pg.Client | undefined;
  private started = false;
  private closed = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(private readonly options: TaskFeedOptions) {}

  /** Hears every change of the task until the returned function is called. */
  subscribe(id: string, listener: (row: TaskRow) => void): () => void {
    let set = this.listeners.get(id);
    if (set === undefined) {
      this.listeners.set(id, (set = new Set()));
      void this.refresh([id]);
    }
    set.add(listener);
    if (!this.started && !this.closed) {
      this.started = true;
      void this.connect();
    }
    this.schedulePoll();
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(id) === set) {
        this.listeners.delete(id);
        this.last.delete(id);
      }
      if (this.listeners.size === 0 && this.pollTimer !== undefined) {
        clearInterval(this.pollTimer);
        this.pollTimer = undefined;
      }
    };
  }

  /** A change this node committed: its listeners hear it now. */
  told(row: TaskRow): void {
    const set = this.listeners.get(row.id);
    if (set === undefined) return;
    this.last.set(row.id, signature(row));
    for (const listener of [...set]) listener(row);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.last.clear();
    clearTimeout(this.reconnectTimer);
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.options.connectionString, keepAlive: true, connectionTimeoutMillis: this.options.connectTimeoutMs });
    // Without a listener an error of this connection (the server restarted) would end the process; it
    // ends the connection instead, and 'end' reconnects.
    client.on('error', (error) => this.options.onError?.(error));
    client.on('end', () => {
      if (this.client === client) this.client = undefined;
      this.reconnect();
    });
    client.on('notification', (message) => {
      if (message.channel !== TASK_CHANNEL || message.payload === undefined) return;
      const space = message.payload.indexOf(' ');
      if (message.payload.slice(0, space) === this.options.nodeId) return;
      const id = message.payload.slice(space + 1);
      if (this.listeners.has(id)) void this.refresh([id]);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${TASK_CHANNEL}`);
    } catch (error) {
      this.options.onError?.(error as Error);
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      this.reconnect();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.attempt = 0;
    // What changed while nobody was listening.
    void this.refresh([...this.listeners.keys()]);
  }

  private reconnect(): void {
    if (this.closed || this.reconnectTimer !== undefined) return;
    this.attempt++;
    const delay = (this.options.reconnectDelayMs ?? defaultReconnectDelayMs)(this.attempt);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }

  private schedulePoll(): void {
    if (this.pollTimer !== undefined || this.closed) return;
    this.pollTimer = setInterval(() => {
      if (this.polling) return;
      this.polling = true;
      void this.refresh([...this.listeners.keys()]).finally(() => {
        this.polling = false;
      });
    }, this.options.pollMs);
    this.pollTimer.unref();
  }

  private async refresh(ids: readonly string[]): Promise<void> {
    if (ids.length === 0 || this.closed) return;
    let rows: readonly TaskRow[];
    try {
      rows = await this.options.read(ids);
    } catch (error) {
      this.options.onError?.(error as Error);
      return;
    }
    for (const row of rows) {
      const set = this.listeners.get(row.id);
      if (set === undefined) continue;
      const sig = signature(row);
      const before = this.last.get(row.id);
      if (before === sig) continue;
      this.last.set(row.id, sig);
      if (before !== undefined) for (const listener of [...set]) listener(row);
    }
  }
}

/** What tells two rows of one task apart for a listener (status, content, money). */
function signature(row: TaskRow): string {
  const b = row.billing;
  return [
    row.status, row.updatedAt, row.completedAt, row.detectedLanguage, row.audioDurationMs, b.state, b.reserved, b.settled, b.released,
    row.transcript === null ? -1 : row.transcript.text.length, row.error?.errorCode ?? '',
  ].join('|');
}
