import type { Violation } from '../../errors/api-errors.js';
import { ValidationError } from '../../errors/client-errors.js';
import { MAX_TIMER_MS } from '../plumbing/timer-set.js';
import { SESSION_OPTIONS, type OptionCheck } from './defaults.js';

/**
 * The checks of the options the session's parts do not check themselves (the table: defaults.ts), every
 * broken rule at once; an option the table does not list is refused. connect() and attach() build a
 * session to check their options before anything reaches the server, so a refused option never leaves
 * a created session behind. Values that would arm no timer, an immediate one, or a window no frame fits
 * would not fail: they would stall a finish or reconnect without end.
 */
export function checkSessionOptions(init: object): void {
  const o = init as Record<string, unknown>;
  const violations: Violation[] = [];
  const add = (field: string, rule: string): void => void violations.push({ field, rule });
  const table: Readonly<Record<string, { readonly check: OptionCheck }>> = SESSION_OPTIONS;
  for (const key of Object.keys(o)) if (!Object.hasOwn(table, key) && o[key] !== undefined) add(key, 'is not a known session option');
  for (const [field, { check }] of Object.entries(table)) {
    const v = o[field];
    if (v === undefined) continue;
    switch (check.rule) {
      case 'ms':
        if (!(typeof v === 'number' && v >= check.min && v <= MAX_TIMER_MS)) add(field, `must be a number of milliseconds in [${check.min}, ${MAX_TIMER_MS}], got ${String(v)}`);
        break;
      case 'samples':
        if (!(Number.isInteger(v) && (v as number) >= check.min)) add(field, `must be a whole number of samples >= ${check.min} (${check.why}), got ${String(v)}`);
        break;
      case 'function':
        if (typeof v !== 'function') add(field, `must be ${check.what}`);
        break;
      case 'policy':
        if (typeof v !== 'object' || v === null || typeof (v as { nextRetryDelayMs?: unknown }).nextRetryDelayMs !== 'function') {
          add(field, 'must be a ReconnectPolicy: an object with nextRetryDelayMs(context) (e.g. new DefaultReconnectPolicy({ ... }))');
        }
        break;
      case 'part':
        break;
    }
  }
  if (violations.length > 0) throw new ValidationError(violations);
}
