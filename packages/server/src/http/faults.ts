import { API_PREFIX, HEADERS } from '@soundclone/core/internal';
import { ApiError } from '../errors.js';
import { SocketFaults } from '../realtime/socket/faults.js';

/**
 * Fault injection for tests of clients (style guide: "a real protocol-level server ... that can be told
 * to misbehave"). A rule matches the next `times` requests by method and path and then:
 *   status                answers with that status (503 and 429 carry Retry-After) without processing
 *   dropBeforeProcessing  destroys the connection before the request is processed
 *   dropAfterProcessing   processes the request fully, then destroys the connection without answering
 *                         (the client cannot know it succeeded: the case idempotency keys exist for)
 *   delay                 waits `ms` before processing
 *   trickle               processes the request, answers the status and headers at once, then the
 *                         body `bytes` at a time (default 16), `everyMs` apart: a slow link or a slow
 *                         server as the client's body reading and per-attempt timeout meet it
 */
export type FaultAction =
  | { readonly kind: 'status'; readonly status: number; readonly retryAfterSec?: number }
  | { readonly kind: 'dropBeforeProcessing' }
  | { readonly kind: 'dropAfterProcessing' }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'trickle'; readonly everyMs: number; readonly bytes?: number };

export interface FaultRule {
  /** HTTP method; any when omitted. */
  readonly method?: string;
  /** Path with or without the /sound_clone/api/v1 prefix (exact match), or a RegExp tested on the full path. */
  readonly path: string | RegExp;
  /** How many matching requests this rule affects (default 1). */
  readonly times?: number;
  readonly action: FaultAction;
}

export interface FaultHandle {
  /** Matching requests still to be affected. */
  readonly remaining: number;
  /** Requests this rule affected so far. */
  readonly hits: number;
  remove(): void;
}

interface ActiveRule {
  readonly rule: FaultRule;
  remaining: number;
  hits: number;
}

export class Faults {
  private rules: ActiveRule[] = [];
  /** Realtime socket faults: acks, supplements, rotation, closes, half-open, slow reads. */
  readonly socket = new SocketFaults();

  inject(rule: FaultRule): FaultHandle {
    const action = rule.action;
    if (action.kind === 'trickle' && !(Number.isSafeInteger(action.everyMs) && action.everyMs >= 0 && (action.bytes === undefined || (Number.isSafeInteger(action.bytes) && action.bytes >= 1)))) {
      throw new TypeError(`a trickle fault takes everyMs (whole milliseconds, at least 0) and bytes (a whole number, at least 1; got ${JSON.stringify(action)})`);
    }
    const active: ActiveRule = { rule, remaining: rule.times ?? 1, hits: 0 };
    this.rules.push(active);
    const rules = (): ActiveRule[] => this.rules;
    return {
      get remaining() {
        return active.remaining;
      },
      get hits() {
        return active.hits;
      },
      remove: () => {
        this.rules = rules().filter((r) => r !== active);
      },
    };
  }

  /** Removes every HTTP rule and every socket rule. */
  clear(): void {
    this.rules = [];
    this.socket.clear();
  }

  /** Consumes one use of the first rule matching this request. */
  take(method: string, fullPath: string): FaultAction | undefined {
    for (const active of this.rules) {
      if (active.remaining <= 0 || !matches(active.rule, method, fullPath)) continue;
      active.remaining -= 1;
      active.hits += 1;
      if (active.remaining === 0) this.rules = this.rules.filter((r) => r !== active);
      return active.rule.action;
    }
    return undefined;
  }
}

/**
 * The error an injected status answers with (429 RATE_LIMITED, 503 SERVICE_UNAVAILABLE, else INTERNAL)
 * and its Retry-After header when the rule gives one; the REST pipeline and the socket upgrade use it.
 */
export function injectedFailure(fault: Extract<FaultAction, { kind: 'status' }>): { error: ApiError; headers: Record<string, string> } {
  const code = fault.status === 429 ? 'RATE_LIMITED' : fault.status === 503 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL';
  const headers: Record<string, string> = fault.retryAfterSec !== undefined ? { [HEADERS.retryAfter]: String(fault.retryAfterSec) } : {};
  return { error: new ApiError(code, `injected fault: ${fault.status}`), headers };
}

function matches(rule: FaultRule, method: string, fullPath: string): boolean {
  if (rule.method !== undefined && rule.method.toUpperCase() !== method) return false;
  if (rule.path instanceof RegExp) return rule.path.test(fullPath);
  const wanted = rule.path.startsWith(API_PREFIX) ? rule.path : API_PREFIX + rule.path;
  return wanted === fullPath;
}
