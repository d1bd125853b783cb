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

/** An answer ready to send: its status, headers and body bytes. */
export interface Rendered {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

export function renderJson(status: number, body: string, headers: Record<string, string> = {}): Rendered {
  const bytes = Buffer.from(body, 'utf8');
  return { status, body: bytes, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(bytes.length), ...headers } };
}

/** A handler's reply as sent (undefined for `answered`: the handler sent it itself). */
export function renderReply(reply: Reply, requestId: string): Rendered | undefined {
  if (reply.kind === 'answered') return undefined;
  const base = { [HEADERS.requestId]: requestId, ...reply.headers };
  if (reply.kind === 'raw') {
    const body = typeof reply.body === 'string' ? Buffer.from(reply.body, 'utf8') : reply.body;
    return { status: reply.status ?? 200, body, headers: { 'Content-Type': reply.contentType, 'Content-Length': String(body.length), ...base } };
  }
  return renderJson(reply.status ?? 200, successBody(reply.data, reply.message), base);
}

export function renderError(error: ApiError, requestId: string, headers: Record<string, string> = {}): Rendered {
  return renderJson(error.status, failureBody(error, requestId), { [HEADERS.requestId]: requestId, ...headers });
}

export function send(res: ServerResponse, rendered: Rendered): void {
  res.writeHead(rendered.status, rendered.headers);
  res.end(rendered.body);
}

export function writeJson(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  send(res, renderJson(status, body, headers));
}

export function writeReply(res: ServerResponse, reply: Reply, requestId: string): void {
  const rendered = renderReply(reply, requestId);
  if (rendered !== undefined) send(res, rendered);
}

export function writeError(res: ServerResponse, error: ApiError, requestId: string, headers: Record<string, string> = {}): void {
  send(res, renderError(error, requestId, headers));
}
