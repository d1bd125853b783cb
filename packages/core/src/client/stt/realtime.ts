import { buildPath } from '../../http/path.js';
import type { CallOptions, Transport } from '../../http/transport.js';
import { HEADERS, LIMITS, PATHS } from '../../protocol.js';
import type { CreateRealtimeSessionParams, RealtimeSession, RealtimeSessionCreated } from '../../types/realtime.js';
import { toDecimalString, type CountInput } from '../../util/decimal.js';
import { newIdempotencyKey } from '../../util/ids.js';
import { object, string } from '../../util/read.js';
import { parseSession } from '../parse/realtime.js';
import { Checks, isPlainObject } from '../validation/checks.js';
import { checkIdempotencyKey, requireId, type CreateTranscriptionOptions } from './transcriptions.js';

/**
 * Real-time sessions over REST (spec "GET /stt/realtime/sessions/{sessionId}", "pause", "finish";
 * creation is ours, with an Idempotency-Key like a batch create). The audio socket is issue 4.
 *
 * capturedSamples is a count: pass a bigint, a safe integer or a decimal string; it is always sent
 * as a decimal string, "the contract form" (spec "finish"). pause and finish are retried like reads:
 * a repeated finish "returns the same task and never charges twice" (spec "finish" 2).
 */
export class Realtime {
  constructor(private readonly transport: Transport) {}

  async create(params: CreateRealtimeSessionParams = {}, options: CreateTranscriptionOptions = {}): Promise<RealtimeSessionCreated> {
    const c = new Checks();
    c.string('title', params.title, LIMITS.titleMaxChars, { allowEmpty: true });
    c.string('languageHint', params.languageHint, 32);
    if (params.options !== undefined && !isPlainObject(params.options)) c.add('options', 'must be an object');
    if (isPlainObject(params.options) && 'matchKnownSpeakers' in params.options) c.add('options.matchKnownSpeakers', 'is unavailable and must not be requested (rule 5)');
    const key = options.idempotencyKey ?? newIdempotencyKey();
    checkIdempotencyKey(c, key);
    c.throwIfAny();
    const result = await this.transport.request(
      { method: 'POST', path: buildPath(PATHS.realtimeSessions), json: params, headers: { [HEADERS.idempotencyKey]: key }, retry: 'repeatable' },
      options,
    );
    const socket = object(object(result.data, 'data')['socket'], 'data.socket');
    return {
      ...parseSession(result.data),
      socket: { url: string(socket['url'], 'data.socket.url'), token: string(socket['token'], 'data.socket.token'), expiresAt: string(socket['expiresAt'], 'data.socket.expiresAt') },
      replayed: result.headers.get(HEADERS.idempotentReplayed) === 'true',
      idempotencyKey: key,
    };
  }

  async get(sessionId: string, call?: CallOptions): Promise<RealtimeSession> {
    requireId('sessionId', sessionId);
    const { data } = await this.transport.request({ method: 'GET', path: buildPath(PATHS.realtimeSession, { sessionId }), retry: 'repeatable' }, call);
    return parseSession(data);
  }

  /** Pauses recording and commits the current segment. Response body: ours, the session view. */
  async pause(sessionId: string, capturedSamples: CountInput, call?: CallOptions): Promise<RealtimeSession> {
    return this.post(PATHS.realtimePause, sessionId, capturedSamples, call);
  }

  /** Finishes the session: settles once and completes the History task. May take ~8 s (supplements). */
  async finish(sessionId: string, capturedSamples: CountInput, call?: CallOptions): Promise<RealtimeSession> {
    return this.post(PATHS.realtimeFinish, sessionId, capturedSamples, call);
  }

  private async post(template: string, sessionId: string, capturedSamples: CountInput, call: CallOptions | undefined): Promise<RealtimeSession> {
    const c = new Checks();
    if (typeof sessionId !== 'string' || sessionId === '') c.add('sessionId', 'is required and must be a non-empty string');
    const captured = toDecimalString(capturedSamples);
    if (captured === undefined) c.add('capturedSamples', 'must be a non-negative integer (bigint, safe integer or decimal string)');
    c.throwIfAny();
    const { data } = await this.transport.request(
      { method: 'POST', path: buildPath(template, { sessionId }), json: { capturedSamples: captured }, retry: 'repeatable' },
      call,
    );
    return parseSession(data);
  }
}
