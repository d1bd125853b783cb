import { TestingError } from '../errors.js';
import { durationMs, type Duration } from './duration.js';
import type { ResolvedTime } from './options.js';

/**
 * Taken when this module loads, before a test can install fake timers: the clock lets the service's
 * sockets and the SDK's messages flow between the timers it fires, which needs the real event loop
 * even when the test has faked the global timers.
 */
const realSetImmediate = globalThis.setImmediate;
const turn = (): Promise<void> => new Promise((resolve) => realSetImmediate(resolve));

/** The samples of one second of received audio (the service hears 16 kHz mono). */
const SAMPLES_PER_MS = 16;

interface Armed {
  readonly due: number;
  readonly seq: number;
  readonly fn: () => void;
}

/** What a test reads and moves: the test server's clock (`server.clock`). */
export interface TestClock {
  /** 'real': the system clock (advance() throws); 'virtual': moved by advance(); 'audio': also by received audio. */
  readonly mode: 'real' | 'virtual' | 'audio';
  /** The service's time, epoch milliseconds. */
  now(): number;
  /**
   * Moves the service's time on by `time` (`'1h'`, `'30s'`, `'250ms'` or milliseconds), running every
   * timer of the service due on the way in order, each at its own time, with the event loop turning
   * between them so that what a timer sent reaches its socket before the next one runs. Resolves when
   * the clock has got there. Advances made while one runs queue behind it.
   */
  advance(time: Duration): Promise<void>;
  /** Timers of the service armed on this clock and not run yet (a session's recovery window, a rotation). */
  readonly pendingTimers: number;
}

/** A server on real time: `now()` reads the system clock; `advance()` is refused. */
export class RealTestClock implements TestClock {
  readonly mode = 'real';
  readonly pendingTimers = 0;

  now(): number {
    return Date.now();
  }

  advance(): Promise<void> {
    return Promise.reject(new TestingError('TESTING_INVALID_TIME', "advance(): this server runs on real time; start it with time: 'virtual' or 'audio'"));
  }
}

/**
 * The service's clock under a test's control (ServerOptions.clock: `now` and `setTimer`). Time stands
 * still until `advance()`, or, driven by audio, until a session's received audio passes the furthest
 * any session had reached: the clock moves on by that much (one session: its received audio is its
 * time). Timers run in order of when they are due (armed order on a tie), never early, never twice.
 *
 * No real timer is armed: a virtual clock keeps no process alive and leaves nothing open.
 */
export class VirtualClock implements TestClock {
  readonly mode: 'virtual' | 'audio';
  #now: number;
  /** Where the clock is going: advance() and received audio move it; the run loop catches up. */
  #target: number;
  #seq = 0;
  readonly #timers = new Map<number, Armed>();
  #running: Promise<void> | undefined;
  #stopped = false;
  /** The furthest any session's received audio has reached (audio mode). */
  #furthest = 0n;
  readonly #alongside: ((ms: number) => unknown) | undefined;

  constructor(time: ResolvedTime) {
    this.mode = time.mode === 'audio' ? 'audio' : 'virtual';
    this.#now = time.startAt ?? Date.now();
    this.#target = this.#now;
    this.#alongside = time.alongside;
  }

  now(): number {
    return this.#now;
  }

  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** ServerOptions.clock's timers: `fn` runs when the clock has moved on by `ms`. */
  setTimer(ms: number, fn: () => void): () => void {
    const seq = this.#seq++;
    if (!this.#stopped) this.#timers.set(seq, { due: this.#now + Math.max(0, ms), seq, fn });
    return () => {
      this.#timers.delete(seq);
    };
  }

  advance(time: Duration): Promise<void> {
    if (this.#stopped) return Promise.reject(new TestingError('TESTING_CLOSED', 'clock.advance() after close()'));
    let ms: number;
    try {
      ms = durationMs(time, 'clock.advance()');
    } catch (error) {
      return Promise.reject(error);
    }
    this.#target += ms;
    return this.#run();
  }

  /** A session accepted audio up to `receivedSamples` (the kit's audio tap calls this in audio mode). */
  heard(receivedSamples: bigint): void {
    if (this.mode !== 'audio' || this.#stopped) return;
    if (receivedSamples <= this.#furthest) return;
    const grownMs = Number(receivedSamples - this.#furthest) / SAMPLES_PER_MS;
    this.#furthest = receivedSamples;
    this.#target += grownMs;
    // Nothing due on the way and no one to move alongside: the clock gets there now, in step with the
    // frame, without waiting a turn of the loop (an hour of audio is 180,000 frames).
    if (this.#running === undefined && this.#alongside === undefined && this.#nextDue(this.#target) === undefined) {
      this.#now = this.#target;
      return;
    }
    void this.#run();
  }

  /** The server closed: every timer is dropped, and the clock moves no more. */
  stop(): void {
    this.#stopped = true;
    this.#timers.clear();
  }

  #run(): Promise<void> {
    this.#running ??= this.#loop().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #loop(): Promise<void> {
    for (;;) {
      // Let what the last step set going (a message, a socket closing) happen before the next timer.
      await turn();
      if (this.#stopped) return;
      const next = this.#nextDue(this.#target);
      if (next === undefined) {
        if (this.#now >= this.#target) return;
        await this.#step(this.#target);
        continue;
      }
      await this.#step(next.due);
      if (!this.#timers.delete(next.seq)) continue; // cancelled by what ran alongside
      try {
        next.fn();
      } catch (error) {
        // As a real timer's would: thrown where no caller can catch it, so the test hears of it.
        realSetImmediate(() => {
          throw error;
        });
      }
    }
  }

  /** Moves the clock (and the test's fake timers alongside) to `to`, never back. */
  async #step(to: number): Promise<void> {
    const by = to - this.#now;
    if (by <= 0) return;
    if (this.#alongside !== undefined) await this.#alongside(by);
    this.#now = Math.max(this.#now, to);
  }

  /** The timer due first at or before `limit` (armed first on a tie). */
  #nextDue(limit: number): Armed | undefined {
    let next: Armed | undefined;
    for (const armed of this.#timers.values()) {
      if (armed.due > limit) continue;
      if (next === undefined || armed.due < next.due || (armed.due === next.due && armed.seq < next.seq)) next = armed;
    }
    return next;
  }
}
