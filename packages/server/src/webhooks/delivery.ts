import { setMaxListeners } from 'node:events';
import { HEADERS } from '@soundclone/core/internal';
import { WEBHOOK_DELIVERY } from '../protocol.js';
import { guardedFetch, type GuardOptions } from '../media/guarded-fetch.js';
import { sleep, type Clock } from '../util/clock.js';
import { billingView } from '../domain/accounts/billing.js';
import type { DeliveryAttempt, DeliveryOutcome, DeliveryRow, Store, TaskRow } from '../store/store.js';
import { signWebhook } from './signing.js';

export type { DeliveryAttempt, DeliveryRow };

/** Deliveries one sender claims at a time. */
const CLAIM_BATCH = 16;
/** Time past an attempt's timeout and the wait after it that a claim still holds, for a slow sender. */
const LEASE_MARGIN_MS = 5_000;

/**
 * Completion webhooks (spec "Completion notification"; scheme ours, protocol.ts WEBHOOK), sent from the
 * store's outbox: the step that ends a task adds its delivery, so none is lost between the two, and the
 * event id is fixed there. The same event id and body on every attempt (the body is built from the
 * ended task, which no longer changes), a fresh timestamp and signature per attempt. Retried after each
 * delay of retryDelaysMs on a network error or a non-2xx answer. The destination goes through the same
 * guard as mediaUrl (and the same test-only allowMediaHosts); a refused destination is not retried.
 *
 *   delivery added --claim (held for an attempt and the wait after it)--> attempt --2xx--> delivered
 *                                                    ^                       |--refused--> refused
 *                                                    +----wait, next attempt-+--last one--> failed
 *
 * A sender that stops mid-way (the server closes, or its process dies) leaves the claim to lapse; a
 * sender that claims it then goes on from the next attempt, with the same event id.
 */
export class WebhookDispatcher {
  private readonly abort = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private readonly unsubscribe: () => void;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  private claimFailing = false;

  constructor(
    private readonly store: Store,
    private readonly guard: Omit<GuardOptions, 'maxBytes' | 'timeoutMs'>,
    private readonly retryDelaysMs: readonly number[],
    private readonly clock: Clock,
    /**
     * Also claim every so often (ms): with several nodes on one store, a delivery another node added, or
     * left when it died, is heard of no other way. Off for a store only this process uses.
     */
    pollMs?: number,
  ) {
    setMaxListeners(0, this.abort.signal);
    this.unsubscribe = store.events.onDeliveryAdded(() => this.claim());
    if (pollMs !== undefined) {
      const timer = setInterval(() => this.claim(), pollMs);
      timer.unref();
      this.abort.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
      this.claim();
    }
  }

  /** Claims what is due and sends it; a call while a claim runs makes one more claim after it. */
  claim(): void {
    if (this.abort.signal.aborted) return;
    if (this.claiming !== undefined) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claimDue().finally(() => {
      this.claiming = undefined;
      if (this.claimAgain) {
        this.claimAgain = false;
        this.claim();
      }
    });
  }

  private async claimDue(): Promise<void> {
    let due: readonly DeliveryRow[];
    try {
      due = await this.store.outbox.claimDue(this.clock.now(), CLAIM_BATCH, this.leaseFor(0));
    } catch (error) {
      // The store cannot answer now: the deliveries stay due and are claimed at the next addition or
      // poll. Said once per outage, not at every poll.
      if (!this.claimFailing) console.error('soundclone server: cannot claim webhook deliveries (will keep trying):', error);
      this.claimFailing = true;
      return;
    }
    if (this.claimFailing) console.error('soundclone server: claiming webhook deliveries again');
    this.claimFailing = false;
    for (const delivery of due) {
      const run = this.deliver(delivery)
        .catch((error: unknown) => console.error(`soundclone server: webhook delivery ${delivery.eventId} stopped:`, error))
        .finally(() => this.running.delete(run));
      this.running.add(run);
    }
    if (due.length === CLAIM_BATCH) this.claimAgain = true;
  }

  private async deliver(delivery: DeliveryRow): Promise<void> {
    const task = await this.store.tasks.get(delivery.taskId);
    if (task === undefined) throw new Error(`task ${delivery.taskId} of delivery ${delivery.eventId} is not in the store`);
    const body = eventBody(delivery, task);
    const secret = task.options?.notificationSigningSecret;
    const attempts = this.retryDelaysMs.length + 1;
    for (let attempt = delivery.attempts.length + 1; attempt <= attempts; attempt++) {
      if (this.abort.signal.aborted) return;
      const timestampSec = Math.floor(this.clock.now() / 1000);
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        [HEADERS.webhookEventId]: delivery.eventId,
        [HEADERS.webhookAttempt]: String(attempt),
      };
      if (secret !== undefined) headers[HEADERS.webhookSignature] = signWebhook(secret, timestampSec, body);
      let record: DeliveryAttempt;
      let outcome: DeliveryOutcome = 'pending';
      try {
        const response = await guardedFetch(delivery.url, { ...this.guard, maxBytes: 64 * 1024, timeoutMs: WEBHOOK_DELIVERY.timeoutMs }, { method: 'POST', headers, body });
        record = { attempt, at: this.clock.now(), status: response.status };
        if (response.status >= 200 && response.status < 300) outcome = 'delivered';
      } catch (error) {
        const details = (error as { details?: { reason?: string } }).details;
        record = { attempt, at: this.clock.now(), error: (error as Error).message };
        if (details?.reason === 'DESTINATION_NOT_ALLOWED') outcome = 'refused';
      }
      const delay = this.retryDelaysMs[attempt - 1];
      if (outcome === 'pending' && delay === undefined) outcome = 'failed';
      await this.store.outbox.recordAttempt(delivery.eventId, record, outcome, this.clock.now() + this.leaseFor(delay ?? 0));
      if (outcome !== 'pending') return;
      await sleep(delay as number, this.abort.signal);
    }
  }

  /** How long a claim holds: the attempt's timeout and the wait after it, with room to spare. */
  private leaseFor(waitMs: number): number {
    return waitMs + WEBHOOK_DELIVERY.timeoutMs + LEASE_MARGIN_MS;
  }

  /** Stops sending (server close); what is pending stays in the outbox. */
  async close(): Promise<void> {
    this.unsubscribe();
    this.abort.abort();
    await this.claiming;
    await Promise.allSettled([...this.running]);
  }
}

/** The event's JSON: fixed by the delivery's id and time and the ended task. */
function eventBody(delivery: DeliveryRow, task: TaskRow): string {
  return JSON.stringify({
    id: delivery.eventId,
    type: task.status === 'FAILED' ? 'transcription.failed' : 'transcription.completed',
    createdAt: new Date(delivery.createdAt).toISOString(),
    data: {
      transcriptionId: task.id,
      status: task.status,
      modelId: task.modelId,
      billing: billingView(task.billing),
      ...(task.error !== undefined ? { error: task.error } : {}),
      clientMetadata: task.options?.clientMetadata ?? null,
    },
  });
}
