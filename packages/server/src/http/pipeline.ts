import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Account } from '../domain/accounts/accounts.js';
import { ApiError, isApiError } from '../errors.js';
import { isStoreError } from '../store/store.js';
import { HEADERS } from '@soundclone/core/internal';
import { ID_PREFIXES } from '../protocol.js';
import { sleep } from '../util/clock.js';
import { randomId } from '../util/ids.js';
import { failureBody, renderError, renderReply, send, writeJson, type Rendered } from './envelope.js';
import { injectedFailure, type FaultAction, type Faults } from './faults.js';
import { requestTurn } from './heavy-turns.js';
import { ResponseBudget, type ResponseLimits } from './response-budget.js';
import { trickle } from './trickle.js';
import type { Router } from './router.js';

export interface RequestLogEntry {
  readonly method: string;
  readonly path: string;
  readonly status: number | 'dropped';
  readonly requestId: string;
  readonly idempotencyKey?: string;
  /** The failure envelope's errorCode, for a request answered with one (409 IDEMPOTENCY_CONFLICT, …). */
  readonly errorCode?: string;
}

export interface PipelineDeps {
  readonly router: Router;
  readonly faults: Faults;
  /** The accessKey header's value to its account; throws ApiError UNAUTHORIZED. */
  readonly authenticate: (accessKey: string | undefined) => Account;
  readonly responseLimits: ResponseLimits;
  /** Aborted when the server closes: an injected delay stops waiting. */
  readonly signal: AbortSignal;
}

/** Requests kept in the log (RunningServer.requests). */
const REQUEST_LOG_SIZE = 1000;

/**
 * Every REST request, in this order (GET /health, the balancer's internal check, never gets here:
 * server.ts answers it before the pipeline, nodes/health.ts):
 *
 *   admission       one request of a connection at a time, behind its unread answers
 *                   (response-budget.ts), then a turn for heavy bodies (heavy-turns.ts)
 *   faults          an injected fault answers, drops or delays it (faults.ts)
 *   routing         404 NOT_FOUND, 405 METHOD_NOT_ALLOWED (router.ts)
 *   authentication  the accessKey header names the account (401 UNAUTHORIZED)
 *   handler         its reply in the success envelope, an ApiError in the failure envelope
 *                   (envelope.ts); the store's database unreachable is a 503 SERVICE_UNAVAILABLE
 *                   with Retry-After; anything else is a 500 INTERNAL
 *   request log     method, path, status (or 'dropped'), request id, Idempotency-Key and a
 *                   failure's errorCode
 */
export class RequestPipeline {
  /** The last 1,000 requests, oldest first. */
  readonly requests: RequestLogEntry[] = [];
  private readonly budgets = new WeakMap<Socket, ResponseBudget>();

  constructor(private readonly deps: PipelineDeps) {}

  /** The HTTP server's request listener. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => void this.admit(req, res);

  /** Pipelined requests wait their turn, and behind unread answers (response-budget.ts). */
  private async admit(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const budget = this.budgetOf(req.socket);
    const admission = budget.admit();
    if (admission !== true && !(await admission)) return;
    await requestTurn();
    try {
      await this.handle(req, res, budget);
    } finally {
      budget.done();
    }
  }

  private budgetOf(socket: Socket): ResponseBudget {
    let budget = this.budgets.get(socket);
    if (budget === undefined) {
      budget = new ResponseBudget(socket, this.deps.responseLimits);
      this.budgets.set(socket, budget);
    }
    return budget;
  }

  private async handle(req: IncomingMessage, res: ServerResponse, budget: ResponseBudget): Promise<void> {
    const { router, faults, authenticate, signal } = this.deps;
    const requestId = randomId(ID_PREFIXES.request);
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://localhost');
    const idempotencyKey = req.headers['idempotency-key'];
    const entry = (status: number | 'dropped', errorCode?: string): RequestLogEntry => ({
      method, path: url.pathname, status, requestId, ...(typeof idempotencyKey === 'string' ? { idempotencyKey } : {}), ...(errorCode !== undefined ? { errorCode } : {}),
    });
    const fault = faults.take(method, url.pathname);
    if (fault?.kind === 'dropBeforeProcessing') {
      this.log(entry('dropped'));
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'status') {
      const { error, headers } = injectedFailure(fault);
      req.resume();
      writeJson(res, fault.status, failureBody(error, requestId), { [HEADERS.requestId]: requestId, ...headers });
      budget.track(res);
      this.log(entry(fault.status, error.code));
      return;
    }
    if (fault?.kind === 'delay') await sleep(fault.ms, signal);
    try {
      const match = router.match(method, url.pathname);
      if (match.kind === 'not-found') throw new ApiError('NOT_FOUND', `no endpoint ${method} ${url.pathname}`);
      if (match.kind === 'method-not-allowed') throw new ApiError('METHOD_NOT_ALLOWED', `${method} is not allowed here; use ${match.allowed.join(', ')}`);
      const account = authenticate(headerValue(req.headers['accesskey']));
      const reply = await match.route.handler({ req, res, requestId, account, params: match.params, query: url.searchParams });
      if (fault?.kind === 'dropAfterProcessing') {
        this.log(entry('dropped'));
        req.socket.destroy();
        return;
      }
      const rendered = renderReply(reply, requestId);
      if (rendered !== undefined) await this.answer(res, rendered, budget, fault);
      this.log(entry(reply.status ?? 200));
    } catch (caught) {
      const error = asApiError(caught);
      if (fault?.kind === 'dropAfterProcessing') {
        this.log(entry('dropped'));
        req.socket.destroy();
        return;
      }
      // A body we stopped reading cannot be followed by another request on this connection.
      const headers: Record<string, string> = error.code === 'PAYLOAD_TOO_LARGE' || error.code === 'STORAGE_QUOTA_EXCEEDED' ? { Connection: 'close' } : {};
      if (error.retryAfterSec !== undefined) headers[HEADERS.retryAfter] = String(error.retryAfterSec);
      if (!res.headersSent) await this.answer(res, renderError(error, requestId, headers), budget, fault);
      this.log(entry(error.status, error.code));
    }
  }

  /** Sends an answer: at once, or trickled when a `trickle` fault took this request. */
  private async answer(res: ServerResponse, rendered: Rendered, budget: ResponseBudget, fault: FaultAction | undefined): Promise<void> {
    if (fault?.kind !== 'trickle') {
      send(res, rendered);
      budget.track(res);
      return;
    }
    const { 'Content-Length': _length, ...headers } = rendered.headers;
    await trickle(res, rendered.status, headers, rendered.body, { bytes: fault.bytes ?? 16, everyMs: fault.everyMs }, this.deps.signal);
  }

  private log(entry: RequestLogEntry): void {
    this.requests.push(entry);
    if (this.requests.length > REQUEST_LOG_SIZE) this.requests.shift();
  }
}

/** Seconds a client waits before trying again when the store's database is unreachable. */
const STORE_RETRY_AFTER_SEC = 1;

/**
 * What a failure answers: an ApiError as it is; the store's database unreachable (StoreError
 * STORE_UNAVAILABLE: nothing was written) 503 SERVICE_UNAVAILABLE, details.reason STORE_UNAVAILABLE,
 * with Retry-After; anything else 500 INTERNAL.
 */
export function asApiError(caught: unknown): ApiError {
  if (isApiError(caught)) return caught;
  if (isStoreError(caught) && caught.code === 'STORE_UNAVAILABLE') {
    return new ApiError('SERVICE_UNAVAILABLE', 'the service cannot reach its database right now; try again shortly', { reason: 'STORE_UNAVAILABLE' }, { cause: caught, retryAfterSec: STORE_RETRY_AFTER_SEC });
  }
  return new ApiError('INTERNAL', 'internal error', undefined, { cause: caught });
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
