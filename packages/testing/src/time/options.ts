import { TestingError } from '../errors.js';

/**
 * How a test server keeps time (`startTestServer({ time })`):
 *   'real' (default)  the service runs on the system clock
 *   'virtual'         the service's clock moves only on `server.clock.advance()`
 *   'audio'           it also moves with the audio the sessions receive (16,000 samples: one second)
 * or the object form, for where the clock starts and the test's own fake timers.
 */
export type TimeOption = 'real' | 'virtual' | 'audio' | VirtualTimeOptions;

export interface VirtualTimeOptions {
  /** What moves the clock besides `advance()`: nothing (`'advance'`, the default) or received audio (`'audio'`). */
  readonly drivenBy?: 'advance' | 'audio';
  /** Epoch milliseconds the clock starts at (default: `Date.now()` when the server starts). */
  readonly startAt?: number;
  /**
   * Moved by the same steps as the service's clock, before the service's timers due at the end of a
   * step run: the test's fake timers, so the SDK's own timers (reconnect backoff, ack watchdog) follow
   * too. With vitest: `alongside: (ms) => vi.advanceTimersByTimeAsync(ms)`; with @sinonjs/fake-timers:
   * `alongside: (ms) => clock.tickAsync(ms)`.
   */
  readonly alongside?: (ms: number) => unknown;
}

export interface ResolvedTime {
  readonly mode: 'real' | 'virtual' | 'audio';
  readonly startAt?: number;
  readonly alongside?: (ms: number) => unknown;
}

export function resolveTime(option: TimeOption | undefined): ResolvedTime {
  if (option === undefined || option === 'real') return { mode: 'real' };
  if (option === 'virtual' || option === 'audio') return { mode: option };
  if (typeof option !== 'object' || option === null) throw new TestingError('TESTING_INVALID_TIME', `time: 'real', 'virtual', 'audio' or { drivenBy, startAt, alongside } (got ${JSON.stringify(option)})`);
  const { drivenBy = 'advance', startAt, alongside } = option;
  if (drivenBy !== 'advance' && drivenBy !== 'audio') throw new TestingError('TESTING_INVALID_TIME', `time.drivenBy: 'advance' or 'audio' (got ${JSON.stringify(drivenBy)})`);
  if (startAt !== undefined && !Number.isFinite(startAt)) throw new TestingError('TESTING_INVALID_TIME', `time.startAt: epoch milliseconds (got ${String(startAt)})`);
  if (alongside !== undefined && typeof alongside !== 'function') throw new TestingError('TESTING_INVALID_TIME', 'time.alongside: a function of the milliseconds to move');
  return { mode: drivenBy === 'audio' ? 'audio' : 'virtual', ...(startAt !== undefined ? { startAt } : {}), ...(alongside !== undefined ? { alongside } : {}) };
}
