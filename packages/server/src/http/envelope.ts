import type { ServerResponse } from 'node:http';
import { ApiError } from '../errors.js';
import { ENVELOPE_CODE, HEADERS } from '@soundclone/core/internal';

/**
 * What a route handler returns. `data` goes into the success envelope (spec "REST response envelope");
 * `raw` bypasses the envelope (downloads: spec "JSON transcript downloads ... return the transcript
 * view directly"); `answered`: the handler passed the answer on itself (a request forwarded to the node
 * holding its realtime session), with this status.
 */
export type Reply =
  | { readonly kind: 'envelope'; readonly status?: number; readonly data?: unknown; readonly message?: string; readonly headers?: Record<string, string> }
  | { readonly kind: 'raw'; readonly status?: number; readonly body: Buffer | string; readonly contentType: string; readonly headers?: Record<string, string> }
  | { readonly kind: 'answered'; readonly status: number; readonly headers?: undefined };

export function ok(data?: unknown, extra: { status?: number; headers?: Record<string, string>; message?: string } = {}): Reply {
  return { kind: 'envelope', data, ...extra };
}

export function successBody(data: unknown, message = 'success'): string {
  return JSON.stringify(data === undefined ? { code: ENVELOPE_CODE.success, message } : { code: ENVELOPE_CODE.success, message, data });
}

/** Failure envelope: `{ code: -1, message, errorCode, requestId, details? }` (protocol.ts ERROR_STATUS). */
export function failureBody(error: ApiError, requestId: string): string {
  const body: Record<string, unknown> = {
    code: ENVELOPE_CODE.failure,
    message: error.message,
    errorCode: error.code,
    requestId,
  };
  if (error.details !== undefined) body['details'] = error.details;
  return JSON.stringify(body);
}

export function writeJson(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    ...headers,
  });
  res.end(body);
}

export function writeReply(res: ServerResponse, reply: Reply, requestId: string): void {
  if (reply.kind === 'answered') return;
  const base = { [HEADERS.requestId]: requestId, ...reply.headers };
  if (reply.kind === 'raw') {
    const body = typeof reply.body === 'string' ? Buffer.from(reply.body, 'utf8') : reply.body;
    res.writeHead(reply.status ?? 200, {
      'Content-Type': reply.contentType,
      'Content-Length': String(body.length),
      ...base,
    });
    res.end(body);
    return;
  }
  writeJson(res, reply.status ?? 200, successBody(reply.data, reply.message), base);
}

export function writeError(res: ServerResponse, error: ApiError, requestId: string, headers: Record<string, string> = {}): void {
  writeJson(res, error.status, failureBody(error, requestId), { [HEADERS.requestId]: requestId, ...headers });
}
