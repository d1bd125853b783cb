import { setMaxListeners } from 'node:events';
import { HEADERS, WEBHOOK } from '@soundclone/core/internal';
import { ID_PREFIXES, WEBHOOK_DELIVERY } from '../protocol.js';
import { guardedFetch, type GuardOptions } from '../media/guarded-fetch.js';
import { randomId } from '../util/ids.js';
import { sleep, type Clock } from '../util/clock.js';
import { billingView } from '../domain/accounts/billing.js';
import type { Task } from '../domain/transcriptions/tasks.js';
import { signWebhook } from './signing.js';

/**
 * Completion webhooks (spec "Completion notification"; scheme ours, protocol.ts WEBHOOK). One event per
 * terminal task with options.notify; the same event id and body on every attempt, a fresh timestamp and
 * signature per attempt. Retried after each delay of retryDelaysMs on a network error or a non-2xx answer.
 * The destination goes through the same guard as mediaUrl (and the same test-only allowMediaHosts);
 * a refused destination is not retried.
 */
export interface DeliveryAttempt {
  readonly attempt: number;
  readonly at: number;
  readonly status?: number;
  readonly error?: string;
}

export interface DeliveryRecord {
  readonly eventId: string;
  readonly transcriptionId: string;
  readonly url: string;
  readonly attempts: DeliveryAttempt[];
  outcome: 'pending' | 'delivered' | 'failed' | 'refused';
}

export class WebhookDispatcher {
  readonly deliveries: DeliveryRecord[] = [];
  private readonly abort = new AbortController();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly guard: Omit<GuardOptions, 'maxBytes' | 'timeoutMs'>,
    private readonly retryDelaysMs: readonly number[],
    private readonly clock: Clock,
  ) {
    setMaxListeners(0, this.abort.signal);
  }

  notify(task: Task): void {
    const options = task.options;
    if (options?.notify !== true || options.notifyUrl === undefined) return;
    const eventId = randomId(ID_PREFIXES.event);
    const body = JSON.stringify({
      id: eventId,
      type: task.status === 'FAILED' ? 'transcription.failed' : 'transcription.completed',
      createdAt: new Date(this.clock.now()).toISOString(),
      data: {
        transcriptionId: task.id,
        status: task.status,
        modelId: task.modelId,
        billing: billingView(task.billing),
        ...(task.error !== undefined ? { error: task.error } : {}),
        clientMetadata: options.clientMetadata ?? null,
      },
    });
    const record: DeliveryRecord = { eventId, transcriptionId: task.id, url: options.notifyUrl, attempts: [], outcome: 'pending' };
    this.deliveries.push(record);
    const run = this.deliver(record, body, options.notificationSigningSecret).finally(() => this.running.delete(run));
    this.running.add(run);
  }

  private async deliver(record: DeliveryRecord, body: string, secret: string | undefined): Promise<void> {
    for (let attempt = 1; attempt <= this.retryDelaysMs.length + 1; attempt++) {
      if (this.abort.signal.aborted) return;
      const timestampSec = Math.floor(this.clock.now() / 1000);
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        [HEADERS.webhookEventId]: record.eventId,
        [HEADERS.webhookAttempt]: String(attempt),
      };
      if (secret !== undefined) headers[HEADERS.webhookSignature] = signWebhook(secret, timestampSec, body);
      try {
        const response = await guardedFetch(record.url, { ...this.guard, maxBytes: 64 * 1024, timeoutMs: WEBHOOK_DELIVERY.timeoutMs }, { method: 'POST', headers, body });
        record.attempts.push({ attempt, at: this.clock.now(), status: response.status });
        if (response.status >= 200 && response.status < 300) {
          record.outcome = 'delivered';
          return;
        }
      } catch (error) {
        const details = (error as { details?: { reason?: string } }).details;
        record.attempts.push({ attempt, at: this.clock.now(), error: (error as Error).message });
        if (details?.reason === 'DESTINATION_NOT_ALLOWED') {
          record.outcome = 'refused';
          return;
        }
      }
      const delay = this.retryDelaysMs[attempt - 1];
      if (delay === undefined) break;
      await sleep(delay, this.abort.signal);
    }
    record.outcome = 'failed';
  }

  /** Stops pending retries (server close). */
  async close(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled([...this.running]);
  }
}
