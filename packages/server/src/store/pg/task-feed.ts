import pg from 'pg';
import type { TaskRow } from '../store.js';
import { TaskListeners } from '../task-listeners.js';

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
 * A listener is told the row as it stands first (read when it subscribes, or the newest row known
 * when its task is watched already), then every row that differs from the last one it was told
 * (task-listeners.ts), so the three paths never repeat a change and none made after subscribing is
 * missed. Reads run one at a time, ids coalesced, so each sees at least what the one before saw; a
 * read that was already under way when this node told a newer row of a task is not passed on for that
 * task, so a listener never hears a row go back. The LISTEN connection is opened with the first
 * listener; when it drops (the database restarted) it is opened again after a growing, jittered delay,
 * and the watched rows are read at once on reconnect. Nothing here throws into the process: every
 * failure goes to onError.
 */
export class TaskFeed {
  private readonly listeners = new TaskListeners();
  /** Task id -> the newest row passed on: a listener joining a watched task starts from it. */
  private readonly latest = new Map<string, TaskRow>();
  /** Orders reads against told(): each takes the next number. */
  private sequence = 0;
  /** Task id -> the number of this node's last told() row of it. */
  private readonly toldAt = new Map<string, number>();
  /** Ids waiting for the next read. */
  private readonly pending = new Set<string>();
  private reading = false;
  private client: pg.Client | undefined;
  private started = false;
  private closed = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: TaskFeedOptions) {}

  /** Tells the task's row as it stands, then every change of it, until the returned function is called. */
  subscribe(id: string, listener: (row: TaskRow) => void): () => void {
    const { first, remove } = this.listeners.add(id, listener);
    if (first) this.refresh([id]);
    else {
      queueMicrotask(() => {
        const row = this.latest.get(id);
        if (row !== undefined) this.listeners.deliver(row);
      });
    }
    if (!this.started && !this.closed) {
      this.started = true;
      void this.connect();
    }
    this.schedulePoll();
    return () => {
      remove();
      if (!this.listeners.has(id)) {
        this.latest.delete(id);
        this.toldAt.delete(id);
      }
      if (this.listeners.size === 0 && this.pollTimer !== undefined) {
        clearInterval(this.pollTimer);
        this.pollTimer = undefined;
      }
    };
  }

  /** A change this node committed: its listeners hear it now. */
  told(row: TaskRow): void {
    if (!this.listeners.has(row.id)) return;
    this.toldAt.set(row.id, ++this.sequence);
    this.pass(row);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.latest.clear();
    this.toldAt.clear();
    this.pending.clear();
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
      if (this.listeners.has(id)) this.refresh([id]);
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
    this.refresh(this.listeners.ids());
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
    this.pollTimer = setInterval(() => this.refresh(this.listeners.ids()), this.options.pollMs);
    this.pollTimer.unref();
  }

  /** Reads these tasks' rows next (with any others already waiting), one read at a time. */
  private refresh(ids: readonly string[]): void {
    if (this.closed) return;
    for (const id of ids) this.pending.add(id);
    if (!this.reading) void this.readPending();
  }

  private async readPending(): Promise<void> {
    this.reading = true;
    try {
      while (!this.closed) {
        const ids = [...this.pending].filter((id) => this.listeners.has(id));
        this.pending.clear();
        if (ids.length === 0) return;
        const at = ++this.sequence;
        let rows: readonly TaskRow[];
        try {
          rows = await this.options.read(ids);
        } catch (error) {
          // The poll, a notification or the reconnect reads them again.
          this.options.onError?.(error as Error);
          continue;
        }
        for (const row of rows) {
          // Told a newer row of this task while the read was under way.
          if ((this.toldAt.get(row.id) ?? 0) > at) continue;
          this.pass(row);
        }
      }
    } finally {
      this.reading = false;
    }
  }

  private pass(row: TaskRow): void {
    if (this.closed || !this.listeners.has(row.id)) return;
    this.latest.set(row.id, row);
    this.listeners.deliver(row);
  }
}
