import { WebhookVerificationError } from '../errors/webhook-errors.js';
import { parseBilling, parseTaskError } from '../parse/transcription.js';
import type { Billing, TaskError } from '../types/transcription.js';
import { object, string } from '../util/read.js';

/**
 * The completion event (ours, protocol.ts WEBHOOK; spec "Completion notification": clientMetadata is
 * echoed back). Polling the get call stays the authoritative result (spec "Events" 4).
 */
export interface WebhookEvent {
  /** Identical on every delivery attempt of one event: the replay key. */
  readonly id: string;
  readonly type: 'transcription.completed' | 'transcription.failed' | (string & {});
  readonly createdAt: string;
  readonly data: {
    readonly transcriptionId: string;
    readonly status: string;
    readonly modelId: string;
    readonly billing: Billing;
    readonly error?: TaskError;
    readonly clientMetadata: unknown;
  };
}

export function parseWebhookEvent(rawBody: string | Uint8Array): WebhookEvent {
  const text = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  try {
    const e = object(JSON.parse(text) as unknown, 'event');
    const d = object(e['data'], 'event.data');
    return {
      id: string(e['id'], 'event.id'),
      type: string(e['type'], 'event.type'),
      createdAt: string(e['createdAt'], 'event.createdAt'),
      data: {
        transcriptionId: string(d['transcriptionId'], 'event.data.transcriptionId'),
        status: string(d['status'], 'event.data.status'),
        modelId: string(d['modelId'], 'event.data.modelId'),
        billing: parseBilling(d['billing'], 'event.data.billing'),
        ...(d['error'] !== undefined && d['error'] !== null ? { error: parseTaskError(d['error'], 'event.data.error') } : {}),
        clientMetadata: d['clientMetadata'] ?? null,
      },
    };
  } catch (error) {
    throw new WebhookVerificationError('WEBHOOK_MALFORMED_PAYLOAD', `the signed body is not a completion event: ${(error as Error).message}`, { cause: error });
  }
}
