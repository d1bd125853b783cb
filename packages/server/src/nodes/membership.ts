import { NODES, ORPHANED_SESSION_ERROR } from '../protocol.js';
import type { RealtimeSessionRow, Store, TaskError } from '../store/store.js';
import type { Clock } from '../util/clock.js';

export interface NodeIdentity {
  readonly id: string;
  /** Where the other nodes reach this one (forwarding). */
  readonly internalUrl: string;
  /** Where clients reach the service (the balancer). */
  readonly publicUrl: string;
}

/** A node's heartbeat and the sweeper's timing (ms; ServerOptions.nodeTiming, defaults protocol.ts NODES). */
export interface MembershipTiming {
  /** The node beats this often. */
  readonly heartbeatMs: number;
  /** A node silent this long is dead: its realtime sessions are failed. */
  readonly staleAfterMs: number;
  /** Every node looks for dead nodes' sessions this often. */
  readonly sweepEveryMs: number;
}

/**
 * With the live state: takes over a session of a dead node (or one this node, restarted under its id,
 * no longer holds) and answers what came of it. Never rejects for a session someone else holds.
 */
export type OrphanAdopter = (row: RealtimeSessionRow) => Promise<'adopted' | 'ended' | 'held' | 'here'>;

export type NodeHealth = { readonly ok: true } | { readonly ok: false; readonly reason: 'DRAINING' | 'STORE_UNAVAILABLE' };

/**
 * This node in the store's registry (Store.nodes), for as long as it runs:
 *
 *   start --register--> beating (every heartbeatMs: heartbeat; every sweepEveryMs: fail the realtime
 *                       sessions of nodes that stopped beating, Store.nodes.failOrphanedSessions; with
 *                       the live state, adopt them instead: see OrphanAdopter)
 *   beating --drain()--> draining (the registry says so; health() answers DRAINING)
 *   any --stop()--> left (timers cleared, the row removed, this node's own sessions failed at once:
 *                   their audio ends with the process)
 *
 * Every loop catches and goes on: a database that cannot be reached costs beats, never the process.
 * A node that misses beats for staleAfterMs is taken for dead by the others, which then fail its
 * sessions; it must not come back to them. With the live state (Redis) they are adopted instead: a
 * live node takes each over (the lease decides which one), so its recovery window and the abandoned
 * rule run there and a session nobody asks about again still ends. A live node's
 * sessions that nobody finishes are its own to end (../realtime/session/abandoned.ts), settled once in
 * the store whichever node's sweep or finish gets there first.
 */
export class NodeMembership {
  private beat: ReturnType<typeof setInterval> | undefined;
  private sweep: ReturnType<typeof setInterval> | undefined;
  private sweeping = false;
  private drainingFlag = false;

  constructor(
    readonly node: NodeIdentity,
    private readonly store: Store,
    private readonly timing: MembershipTiming,
    private readonly clock: Clock,
    /** Tells of a loop's failure (never thrown). */
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  get draining(): boolean {
    return this.drainingFlag;
  }

  private shared = false;
  private failOrphans = false;
  private adopt: OrphanAdopter | undefined;
  private recycleTunnels: ((drainingNodeIds: ReadonlySet<string>) => void) | undefined;
  /** Draining nodes seen by the sweep, with when first seen (this node's clock). */
  private readonly drainingSeen = new Map<string, number>();

  /**
   * Enters the registry and starts the heartbeat; with `shared` (a store other nodes may share:
   * PostgreSQL) also the sweeper, and stop() then fails what this node leaves running. A single-node
   * store keeps its own rules for that (the journal's recoverInterrupted at the next start).
   */
  async start(options: { readonly shared: boolean; readonly failOrphans?: boolean; readonly adopt?: OrphanAdopter; readonly recycleTunnels?: (drainingNodeIds: ReadonlySet<string>) => void }): Promise<void> {
    this.shared = options.shared;
    this.recycleTunnels = options.shared ? options.recycleTunnels : undefined;
    // With the live state (Redis) a dead node's sessions are taken over (`adopt`), not failed.
    this.adopt = options.shared ? options.adopt : undefined;
    this.failOrphans = options.shared && options.failOrphans !== false && this.adopt === undefined;
    await this.store.nodes.register(this.node);
    this.beat = setInterval(() => {
      this.store.nodes.heartbeat(this.node.id, this.node).catch(this.onError);
    }, this.timing.heartbeatMs);
    this.beat.unref();
    if (this.failOrphans || this.adopt !== undefined) {
      this.sweep = setInterval(() => void this.sweepOnce(), this.timing.sweepEveryMs);
      this.sweep.unref();
    }
  }

  /**
   * Fails dead nodes' sessions once, or with the live state adopts them (also what the timer does);
   * never rejects. Returns the failed task ids, or the ids of the sessions adopted here.
   */
  async sweepOnce(): Promise<readonly string[]> {
    if (this.sweeping) return [];
    this.sweeping = true;
    try {
      if (this.adopt !== undefined) return await this.adoptOrphans(this.adopt);
      return await this.store.nodes.failOrphanedSessions(this.timing.staleAfterMs, orphanedError, this.clock.now());
    } catch (error) {
      this.onError(error);
      return [];
    } finally {
      this.sweeping = false;
    }
  }

  /** One session at a time: a failed adoption is told and the next one tried; the next sweep tries it again. */
  private async adoptOrphans(adopt: OrphanAdopter): Promise<readonly string[]> {
    const adopted: string[] = [];
    // A draining node hands its sessions over: it takes none.
    if (this.drainingFlag) return adopted;
    if (this.recycleTunnels !== undefined) await this.watchDraining(this.recycleTunnels);
    for (const row of await this.store.nodes.orphanedSessions(this.timing.staleAfterMs, this.node.id)) {
      try {
        if ((await adopt(row)) === 'adopted') adopted.push(row.id);
      } catch (error) {
        this.onError(error);
      }
    }
    return adopted;
  }

  /**
   * Sockets that reach this node through another one (tunnels) are cut when that node closes: once a
   * draining node has been seen draining for TUNNEL_RECYCLE_AFTER_MS (the balancer's checks have taken
   * it out by then, so the next socket does not go through it again), its tunnels here are recycled.
   */
  private async watchDraining(recycle: (drainingNodeIds: ReadonlySet<string>) => void): Promise<void> {
    const now = this.clock.now();
    const draining = new Set((await this.store.nodes.list()).filter((n) => n.draining && n.id !== this.node.id).map((n) => n.id));
    for (const id of [...this.drainingSeen.keys()]) if (!draining.has(id)) this.drainingSeen.delete(id);
    for (const id of draining) {
      if (this.drainingSeen.has(id)) continue;
      this.drainingSeen.set(id, now);
      const timer = setTimeout(() => recycle(new Set([id])), TUNNEL_RECYCLE_AFTER_MS);
      timer.unref();
    }
  }

  /** Draining from now on: health() says so at once; the registry as soon as the store takes the write. */
  async drain(): Promise<void> {
    this.drainingFlag = true;
    await this.store.nodes.setDraining(this.node.id).catch(this.onError);
  }

  /**
   * 503 while draining or while the store does not answer a heartbeat within healthStoreTimeoutMs
   * (the balancer then takes the node out); ok otherwise.
   */
  async health(): Promise<NodeHealth> {
    if (this.drainingFlag) return { ok: false, reason: 'DRAINING' };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), NODES.healthStoreTimeoutMs);
    });
    const beat = this.store.nodes.heartbeat(this.node.id, this.node).then(() => true as const, () => false as const);
    const answered = await Promise.race([beat, late]);
    clearTimeout(timer);
    return answered ? { ok: true } : { ok: false, reason: 'STORE_UNAVAILABLE' };
  }

  /**
   * Leaves the registry: timers cleared, the row removed, and the sessions left on this node failed
   * (with every other orphan): their audio ends with this process. Never rejects.
   */
  async stop(): Promise<void> {
    clearInterval(this.beat);
    clearInterval(this.sweep);
    this.beat = undefined;
    this.sweep = undefined;
    if (!this.shared) return;
    try {
      await this.store.nodes.leave(this.node.id);
      if (this.failOrphans) await this.store.nodes.failOrphanedSessions(this.timing.staleAfterMs, orphanedError, this.clock.now());
    } catch (error) {
      this.onError(error);
    }
  }
}

/** How long after a node is first seen draining its tunnels to this node are recycled (ms): the balancer's check (500 ms, fall 2) takes it out first. */
const TUNNEL_RECYCLE_AFTER_MS = 1000;

function orphanedError(task: { readonly requestId: string }): TaskError {
  return { ...ORPHANED_SESSION_ERROR, requestId: task.requestId };
}
