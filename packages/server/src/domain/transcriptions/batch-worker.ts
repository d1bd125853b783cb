import type { DecodedTrack } from '../../media/decode.js';
import type { ClaimedTask, Lease, Store, TaskRow } from '../../store/store.js';
import type { TranscriptionRunner } from './runner.js';

/**
 * Batch leases on a database several servers share (docs/protocol.md "Batch leases"; defaults protocol.ts
 * BATCH_LEASES). A server killed mid-task leaves it to another about leaseMs + pollMs later.
 */
export interface LeaseTiming {
  /** How long a claim or a heartbeat holds a task's lease (ms, default 4,000). */
  readonly leaseMs: number;
  /** How often a server extends the leases of the tasks it runs (ms, default 1,000); well below leaseMs. */
  readonly heartbeatMs: number;
  /** How often a server looks for tasks whose lease is free or has passed (ms, default 1,000). */
  readonly pollMs: number;
  /** Tasks one look claims at most (default 4). */
  readonly claimBatch: number;
}

interface Running {
  readonly lease: Lease;
  readonly abort: AbortController;
  readonly done: Promise<void>;
}

/**
 * Which batch tasks this node runs (docs/protocol.md "Batch leases"). One owner of the node's leases:
 *
 *   created here --claim--> run at once (the media is at hand)
 *   shared store, every pollMs --claimDue--> run (media read from the store: a node died, or handed back)
 *   shared store, every heartbeatMs --heartbeat--> a lease another claim replaced: that run stops
 *   handBack() --> stop claiming; runs stop; their leases released for another node to claim now
 *
 * A store only this process uses (memory, journal) gets no timers: the node that creates a task claims
 * and runs it at once, as it always did, and nobody else could take it.
 */
export class BatchWorker {
  private readonly running = new Map<string, Running>();
  private readonly timers: NodeJS.Timeout[] = [];
  private accepting = true;
  private polling: Promise<void> | undefined;
  private beating: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly runner: TranscriptionRunner,
    private readonly timing: LeaseTiming,
    /** True when other nodes share the store (PostgreSQL): poll for tasks and keep leases alive. */
    private readonly shared: boolean,
    private readonly lifetime: AbortSignal,
  ) {
    for (const [name, value] of Object.entries(timing)) {
      if (!Number.isSafeInteger(value) || value < 1 || value > 2_147_483_647) throw new TypeError(`batchLeases.${name} must be a whole number in [1, 2147483647] (got ${value})`);
    }
    if (timing.heartbeatMs >= timing.leaseMs) throw new TypeError(`batchLeases.heartbeatMs (${timing.heartbeatMs}) must be shorter than leaseMs (${timing.leaseMs}): a lease would pass between heartbeats`);
    if (!shared) return;
    const every = (ms: number, tick: () => void): void => {
      const timer = setInterval(tick, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(timing.pollMs, () => this.poll());
    every(timing.heartbeatMs, () => this.heartbeat());
    lifetime.addEventListener('abort', () => this.stopTimers(), { once: true });
    this.poll();
  }

  /** Batch tasks this node runs now. */
  get runningCount(): number {
    return this.running.size;
  }

  /**
   * A task this node just created: claimed and run at once with the media at hand. Not on a shared
   * store once this node hands its work back: the task is left to another node's next claim at once
   * (not after the creator's grace).
   */
  start(task: TaskRow, media: DecodedTrack): void {
    if (this.shared && !this.accepting) {
      this.store.leases.release([{ taskId: task.id, token: 0n }]).catch((error: unknown) => {
        console.error(`soundclone server: could not hand transcription ${task.id} to another node (it waits for the creator's grace):`, error);
      });
      return;
    }
    void (async () => {
      let claimed: ClaimedTask | undefined;
      try {
        claimed = await this.store.leases.claim(task.id, this.timing.leaseMs);
      } catch (error) {
        // Left for the next claim (another node's, once the creator's grace has passed).
        console.error(`soundclone server: could not claim transcription ${task.id}:`, error);
        return;
      }
      // Another node claimed it first: it runs there.
      if (claimed !== undefined) this.launch(claimed, media);
    })();
  }

  /**
   * Stops claiming and hands every task this node runs back at once (a draining node, before it
   * closes): the runs stop where they are, writing nothing more, and their leases are released so
   * another node claims them at its next poll. Resolves with how many were handed back. On a store
   * only this process uses there is nobody to hand them to: it resolves (with 0) once they have ended.
   */
  async handBack(): Promise<number> {
    if (!this.shared) {
      await Promise.allSettled([...this.running.values()].map((r) => r.done));
      return 0;
    }
    this.accepting = false;
    this.stopTimers();
    const leases = [...this.running.values()].map((r) => {
      r.abort.abort();
      return r.lease;
    });
    await this.polling;
    await this.store.leases.release(leases);
    return leases.length;
  }

  /** Server close: no more claims or heartbeats; resolves once the ones under way have answered. Runs stop with the server's lifetime. */
  async close(): Promise<void> {
    this.accepting = false;
    this.stopTimers();
    await Promise.allSettled([this.polling, this.beating]);
  }

  private launch(claimed: ClaimedTask, media: DecodedTrack | undefined): void {
    const id = claimed.task.id;
    const abort = new AbortController();
    const onClose = (): void => abort.abort();
    this.lifetime.addEventListener('abort', onClose, { once: true });
    const done = this.runner
      .run(claimed, media, abort.signal)
      .catch((error: unknown) => console.error(`soundclone server: transcription ${id} stopped:`, error))
      .finally(() => {
        this.lifetime.removeEventListener('abort', onClose);
        if (this.running.get(id)?.abort === abort) this.running.delete(id);
      });
    this.running.set(id, { lease: claimed.lease, abort, done });
  }

  private poll(): void {
    if (this.polling !== undefined || !this.accepting || this.lifetime.aborted) return;
    this.polling = (async () => {
      try {
        const claimed = await this.store.leases.claimDue(this.timing.claimBatch, this.timing.leaseMs);
        for (const c of claimed) {
          if (this.accepting && !this.lifetime.aborted) this.launch(c, undefined);
        }
        if (!this.accepting && claimed.length > 0) await this.store.leases.release(claimed.map((c) => c.lease));
      } catch (error) {
        // The store cannot answer now: the tasks stay due and are claimed at a later poll.
        if (!this.lifetime.aborted) console.error('soundclone server: could not claim batch tasks:', error);
      }
    })().finally(() => {
      this.polling = undefined;
    });
  }

  private heartbeat(): void {
    if (this.beating !== undefined || this.running.size === 0) return;
    const runs = [...this.running.values()];
    this.beating = (async () => {
      try {
        const lost = new Set(await this.store.leases.heartbeat(runs.map((r) => r.lease), this.timing.leaseMs));
        for (const r of runs) if (lost.has(r.lease.taskId)) r.abort.abort();
      } catch (error) {
        // Not extended: the leases run out unless a later heartbeat gets through, and then another node
        // takes the tasks over; this node's fenced writes find that out and stop.
        if (!this.lifetime.aborted) console.error('soundclone server: could not extend batch leases:', error);
      }
    })().finally(() => {
      this.beating = undefined;
    });
  }

  private stopTimers(): void {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
  }
}
