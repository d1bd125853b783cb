import { Redis } from 'ioredis';
import { LiveStateError } from './live-error.js';
import { END, RELEASE, RENEW, TAKE, WRITE, sessionKeys } from './scripts.js';

/**
 * The live state of realtime sessions in Redis (startServer redisUrl; docs/protocol.md "Several nodes"):
 * who owns each session now (a lease with a fencing token) and what it has made durable so far
 * (live-session.ts writes it). One connection per node; every session this node holds is renewed by
 * one script call every renewEveryMs.
 *
 *   open --connected--> up --'close'/'error' of the connection, a failed or late renewal--> every
 *   held session lost at once ('unavailable'; the owner closes their sockets so clients move) --> up
 *   again when the connection comes back (new sessions and takeovers work again)
 *
 * A renewal that finds another token (a node took the session) loses that session alone ('fenced').
 * Commands are never queued while the connection is down: they fail at once.
 */
export interface LiveTiming {
  /** A lease not renewed for this long lapses: another node may take the session. */
  readonly leaseTtlMs: number;
  /** The owner renews its leases this often. */
  readonly renewEveryMs: number;
  /** A session found without live state is failed once its task is this old (takeover.ts). */
  readonly lostAfterMs: number;
}

/** The watchdog looks this often, and stops this long before a lease could lapse (ms). */
const WATCHDOG_EVERY_MS = 100;
const WATCHDOG_MARGIN_MS = 300;

export type LostReason = 'fenced' | 'unavailable';

/** A session this node holds: its token, and what to do when it is lost. */
export interface HeldLease {
  readonly token: string;
  lose(reason: LostReason): void;
}

export type TakeOutcome = { readonly kind: 'taken'; readonly token: string } | { readonly kind: 'held'; readonly nodeId: string } | { readonly kind: 'missing' };

/** The durable state of one session, as read for a takeover. */
export interface LiveRecord {
  readonly meta: string;
  readonly open: Buffer;
  readonly lines: readonly string[];
  readonly all: Buffer | undefined;
}

interface Scripts {
  scTake(lease: string, fence: string, meta: string, nodeId: string, ttl: number, mode: string, metaJson: string): Promise<[number, string]>;
  scRenew(...args: Array<string | number>): Promise<number[]>;
  scWrite(...args: Array<string | Buffer | number>): Promise<number>;
  scEnd(fence: string, meta: string, open: string, lines: string, all: string, lease: string, token: string, keepMs: number): Promise<number>;
  scRelease(lease: string, holder: string): Promise<number>;
}

export class LiveStore {
  /** Held leases, with when the last renewal (or the take) that Redis answered was sent. */
  private readonly held = new Map<string, { readonly lease: HeldLease; renewedAt: number }>();
  private renewTimer: ReturnType<typeof setInterval> | undefined;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  private renewing = false;
  private up = true;
  private closed = false;

  private constructor(
    private readonly redis: Redis & Scripts,
    readonly nodeId: string,
    readonly timing: LiveTiming,
    private readonly now: () => number,
  ) {}

  /** Connects (rejects with LiveStateError REDIS_UNAVAILABLE when Redis does not answer within a few seconds). */
  static async open(url: string, nodeId: string, timing: LiveTiming, now: () => number = () => performance.now()): Promise<LiveStore> {
    const redis = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      // A Redis that stopped answering (a partition, not a closed connection) fails each command in time.
      commandTimeout: 1000,
      retryStrategy: (attempt) => Math.min(100 * attempt, 1000),
    }) as Redis & Scripts;
    // Until start() listens: a failed connect at open is reported by connect() itself.
    redis.on('error', () => undefined);
    redis.defineCommand('scTake', { numberOfKeys: 3, lua: TAKE });
    redis.defineCommand('scRenew', { lua: RENEW });
    redis.defineCommand('scWrite', { numberOfKeys: 5, lua: WRITE });
    redis.defineCommand('scEnd', { numberOfKeys: 6, lua: END });
    redis.defineCommand('scRelease', { numberOfKeys: 1, lua: RELEASE });
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      redis.disconnect();
      throw new LiveStateError('REDIS_UNAVAILABLE', `Redis at ${redactedUrl(url)} did not answer: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    const store = new LiveStore(redis, nodeId, timing, now);
    store.start();
    return store;
  }

  private start(): void {
    // The connection closed or failed: nothing this node holds can be renewed or written any more.
    this.redis.on('close', () => {
      this.up = false;
      this.loseAll();
    });
    this.redis.on('error', () => this.loseAll());
    this.redis.on('ready', () => {
      this.up = true;
    });
    this.renewTimer = setInterval(() => void this.renew(), this.timing.renewEveryMs);
    this.renewTimer.unref();
    // Redis counts a lease's time from when it ran the renewal, which is after this node sent it: a
    // node that has not had a renewal answered for `stopAfterMs` since sending it stops first.
    const stopAfterMs = Math.max(this.timing.renewEveryMs, this.timing.leaseTtlMs - WATCHDOG_MARGIN_MS);
    this.watchdog = setInterval(() => {
      const now = this.now();
      for (const [id, entry] of [...this.held.entries()]) {
        if (now - entry.renewedAt <= stopAfterMs) continue;
        this.held.delete(id);
        entry.lease.lose('unavailable');
      }
    }, WATCHDOG_EVERY_MS);
    this.watchdog.unref();
  }

  /** Whether this node can write the live state now. */
  get available(): boolean {
    return this.up && !this.closed;
  }

  /** Sessions this node holds now. */
  get heldCount(): number {
    return this.held.size;
  }

  /** A new session: its meta written and its lease taken (token 1); hold() it within the lease's time. */
  async create(sessionId: string, meta: string): Promise<string> {
    const k = sessionKeys(sessionId);
    const [ok, value] = await this.redis.scTake(k.lease, k.fence, k.meta, this.nodeId, this.timing.leaseTtlMs, 'create', meta);
    if (ok !== 1) throw new Error(`the live state already has session ${sessionId}`);
    return value;
  }

  /**
   * Takes a session's lease with a new token: only when nobody holds it (lapsed or let go), or with
   * `force` whatever holds it (its owner is known dead; the fence makes sure it writes nothing more).
   */
  async take(sessionId: string, force: boolean): Promise<TakeOutcome> {
    const k = sessionKeys(sessionId);
    const [ok, value] = await this.redis.scTake(k.lease, k.fence, k.meta, this.nodeId, this.timing.leaseTtlMs, force ? 'force' : 'take', '');
    if (ok === 1) return { kind: 'taken', token: value };
    if (value === 'missing') return { kind: 'missing' };
    return { kind: 'held', nodeId: value.slice(0, value.lastIndexOf(':')) };
  }

  /** The node holding the session's lease now; undefined when nobody does (or there is no such session). */
  async holder(sessionId: string): Promise<string | undefined> {
    const value = await this.redis.get(sessionKeys(sessionId).lease);
    return value === null ? undefined : value.slice(0, value.lastIndexOf(':'));
  }

  /** The session's durable state; undefined when Redis has none. */
  async read(sessionId: string): Promise<LiveRecord | undefined> {
    const k = sessionKeys(sessionId);
    const [meta, open, lines, all] = (await this.redis
      .multi()
      .get(k.meta)
      .getBuffer(k.open)
      .lrange(k.lines, 0, -1)
      .getBuffer(k.all)
      .exec()) as Array<[Error | null, unknown]>;
    const value = <T>(entry: [Error | null, unknown] | undefined): T => {
      if (entry === undefined || entry[0] !== null) throw entry?.[0] ?? new Error('no answer');
      return entry[1] as T;
    };
    const metaJson = value<string | null>(meta);
    if (metaJson === null) return undefined;
    return { meta: metaJson, open: value<Buffer | null>(open) ?? Buffer.alloc(0), lines: value<string[]>(lines), all: value<Buffer | null>(all) ?? undefined };
  }

  /** One fenced write (scripts.ts WRITE): true when it is durable, false when the token is no longer the session's. */
  async write(sessionId: string, token: string, meta: string, audio: Buffer, cutBytes: number, retain: boolean, lines: readonly string[]): Promise<boolean> {
    const k = sessionKeys(sessionId);
    return (await this.redis.scWrite(k.fence, k.meta, k.open, k.lines, k.all, token, meta, audio, cutBytes, retain ? '1' : '0', ...lines)) === 1;
  }

  /** The session ended (settled in the database): its live state goes. */
  async end(sessionId: string, token: string): Promise<void> {
    const k = sessionKeys(sessionId);
    await this.redis.scEnd(k.fence, k.meta, k.open, k.lines, k.all, k.lease, token, 24 * 3600 * 1000);
  }

  /**
   * From now on this node renews the session's lease; lose() is called once if it is lost. `takenAt`:
   * when the create or take that got the lease was sent (now() before it).
   */
  hold(sessionId: string, lease: HeldLease, takenAt: number): void {
    this.held.set(sessionId, { lease, renewedAt: takenAt });
  }

  /** No longer renewed here (the session ended or moved). */
  forget(sessionId: string, lease?: HeldLease): void {
    if (lease === undefined || this.held.get(sessionId)?.lease === lease) this.held.delete(sessionId);
  }

  /** This node's clock for hold()'s takenAt. */
  clock(): number {
    return this.now();
  }

  /** Lets go of a lease this node holds, so another node may take the session at once. */
  async release(sessionId: string, token: string): Promise<void> {
    await this.redis.scRelease(sessionKeys(sessionId).lease, `${this.nodeId}:${token}`);
  }

  private async renew(): Promise<void> {
    if (this.closed) return;
    if (this.renewing || !this.up) return;
    this.renewing = true;
    const sentAt = this.now();
    const entries = [...this.held.entries()];
    try {
      if (entries.length === 0) {
        await this.redis.ping();
      } else {
        const keys: string[] = [];
        const args: Array<string | number> = [this.timing.leaseTtlMs];
        for (const [id, entry] of entries) {
          const k = sessionKeys(id);
          keys.push(k.lease, k.fence);
          args.push(`${this.nodeId}:${entry.lease.token}`, entry.lease.token);
        }
        const answers = await this.redis.scRenew(keys.length, ...keys, ...args);
        entries.forEach(([id, entry], i) => {
          if (answers[i] !== 1) {
            this.forget(id, entry.lease);
            entry.lease.lose('fenced');
          } else if (this.held.get(id) === entry) {
            entry.renewedAt = sentAt;
          }
        });
      }
    } catch {
      this.loseAll();
    } finally {
      this.renewing = false;
    }
  }

  /** Redis cannot be reached (or answers too late): every held session is lost at once. */
  private loseAll(): void {
    if (this.closed) return;
    const lost = [...this.held.values()];
    this.held.clear();
    for (const entry of lost) entry.lease.lose('unavailable');
  }

  /** TEST-ONLY: the node loses its Redis connection now (as a network cut would show it). */
  cutOff(): void {
    this.redis.disconnect(true);
  }

  /** Stops renewing, lets go of every lease still held (so others take over at once), disconnects. */
  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.renewTimer);
    clearInterval(this.watchdog);
    const held = [...this.held.entries()];
    this.held.clear();
    await Promise.all(held.map(([id, entry]) => this.release(id, entry.lease.token).catch(() => undefined)));
    this.closed = true;
    this.redis.disconnect();
  }
}

/** A URL without its password, for messages. */
function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the given URL';
  }
}
