import { REALTIME } from '../../protocol.js';
import type { AudioStats } from '../audio/outbox.js';
import { HealthWindow, type WindowStats } from './health-window.js';
import type { ServerMessage } from '../messages/server-messages.js';
import type { RecoveryAction } from '../recovery/recovery.js';
import type { ConnectionDecision } from '../socket/connection.js';
import type { SessionState } from '../session-state.js';

export type { WindowStats } from './health-window.js';

/**
 * Why a `health` report went out:
 *
 *   connection  the acknowledgements stopped (degraded) or came back (healthy)
 *   lost        the socket was lost: reconnecting (`lastReconnect.cause`)
 *   reconnected a new socket is ready (`lastReconnect.durationMs`)
 *   interval    the periodic snapshot while a socket is up (every `HEALTH_TIMING.everyMs`)
 */
export type HealthReportKind = 'connection' | 'lost' | 'reconnected' | 'interval';

/** One reconnect: why the socket went, and how long until the next one was ready. */
export interface ReconnectRecord {
  readonly cause: string;
  readonly closeCode?: number | undefined;
  /** Wall clock (the session's `now`) when the loss was noticed. */
  readonly lostAt: number;
  /** Loss to the new socket's session.ready; null while still reconnecting. */
  readonly durationMs: number | null;
}

/**
 * The session's health: one snapshot (`session.health`) and the payload of every `health` event.
 * Latencies are on the session's sample clock: the wall time a line (or partial) arrived minus the wall
 * time the last sample it covers was written (packages/core/README.md "Health").
 */
export interface SessionHealth {
  readonly kind: HealthReportKind;
  /**
   * Connection quality: `degraded` while acknowledgements stall or the socket is down; `flapping` while
   * connections keep dropping before they are stable, until one stays up for the stable window.
   */
  readonly state: 'healthy' | 'degraded' | 'flapping';
  readonly reason: string;
  /** The session's state and the reason of its last change. */
  readonly sessionState: SessionState;
  readonly sessionReason: string;
  /** Audio sent and not acknowledged now, in ms. */
  readonly unackedMs: number;
  /** Audio held for resending (unacknowledged and not yet sent), in ms. */
  readonly bufferedMs: number;
  /** bufferedMs over the retained buffer's capacity, 0..1. */
  readonly bufferFill: number;
  /** Audio sent but not acknowledged when each acknowledgement arrived, in ms: how far acks trail. */
  readonly ackLagMs: WindowStats;
  /** Capture to partial: a partial's arrival minus the write time of the last sample the server had acknowledged. */
  readonly partialLatencyMs: WindowStats;
  /** Capture to final: a line's arrival minus the write time of its last sample (its endMs). */
  readonly finalLatencyMs: WindowStats;
  /** Round trip of the session's ping probes. */
  readonly rttMs: WindowStats;
  readonly reconnects: number;
  readonly lastReconnect: ReconnectRecord | null;
  /** Captured audio the voice gate kept off the wire (sent as skipped time), in ms; 0 without the `gate` option. */
  readonly skippedMs: number;
  /** skippedMs over the audio captured, 0..1: the share of audio the gate saved. */
  readonly savedShare: number;
  /** Audio frames and their bytes handed to sockets (resends included; skip frames too). */
  readonly framesSent: number;
  readonly bytesSent: number;
  /** When this snapshot was taken (the session's `now`). */
  readonly at: number;
}

/**
 *   everyMs      the interval snapshot while a socket is up
 *   rttEveryMs   a round-trip ping this often while a socket is ready (one small message)
 *   markEveryMs  the sample clock keeps a (position, wall time) mark at most this often
 *   marks        how many marks: markEveryMs × marks of history (about 100 s); older lines get no latency
 */
export const HEALTH_TIMING = Object.freeze({ everyMs: 1000, rttEveryMs: 5000, markEveryMs: 50, marks: 2048 });

const SAMPLES_PER_MS = REALTIME.sampleRate / 1000;
const RTT_PREFIX = 'rtt-';

/**
 * What the meter takes from the actions and decisions the session runs (everything else it is handed
 * it ignores):
 *
 *   reconnecting  (recovery) the socket was lost: a new outage once a socket had been ready → `lost`
 *   retry         (recovery) with `flapping`: the link keeps dropping → `connection`
 *   promote       (connection) the standby took over: a reconnect with cause `recycled`
 *   health        (connection, the ack watch) the acks stopped or came back → `connection`
 *   ready         a socket said session.ready: it ended an outage or a handoff → `reconnected`
 *   steady        a connection stayed ready for the stable window: it ends a flapping run → `connection`
 */
export type HealthNews = RecoveryAction | ConnectionDecision | { readonly do: 'ready' } | { readonly do: 'steady'; readonly reason: string };

/** What the meter reads from the session when asked for a snapshot. */
export interface HealthView {
  readonly now: number;
  readonly state: SessionState;
  readonly stats: AudioStats;
  readonly framesSent: number;
  readonly bytesSent: number;
}

/**
 * The measures behind `SessionHealth`. The session hands it every action and decision it runs
 * (note()), each write position and each server message of the current socket, and asks it for
 * snapshots and for when an RTT ping or an interval report is due; it keeps only fixed-size windows and
 * the sample clock ring.
 */
export class HealthMeter {
  readonly #ackLag = new HealthWindow();
  readonly #partial = new HealthWindow();
  readonly #final = new HealthWindow();
  readonly #rtt = new HealthWindow();
  /** The sample clock: ring of (captured 16 kHz position, wall time it was written). */
  readonly #markSample = new Float64Array(HEALTH_TIMING.marks);
  readonly #markTime = new Float64Array(HEALTH_TIMING.marks);
  #marks = 0;
  #connection: SessionHealth['state'] = 'healthy';
  /** A flapping run is on: it is what the user is told until a connection proves stable. */
  #flapping = false;
  #reason = 'not connected yet';
  #sessionReason = '';
  #reconnects = 0;
  #last: ReconnectRecord | null = null;
  #down = false;
  /** A socket was ready once: losses before that are the first connect's, not outages. */
  #everReady = false;
  /** A standby took over from a socket the server recycles: the next ready completes that reconnect. */
  #handoff = false;
  #nextReportAt = 0;
  #nextRttAt = 0;
  #rttSeq = 0;
  #rttId: string | undefined;
  #rttSentAt = 0;

  /** Audio up to captured position `produced` was written at `now`. */
  wrote(produced: number, now: number): void {
    const n = this.#marks;
    const size = this.#markSample.length;
    if (n > 0) {
      const last = (n - 1) % size;
      if (produced <= (this.#markSample[last] ?? 0)) return;
      if (now - (this.#markTime[last] ?? 0) < HEALTH_TIMING.markEveryMs) {
        this.#markSample[last] = produced; // the same mark moves forward: its time is when this stretch began arriving
        return;
      }
    }
    this.#markSample[n % size] = produced;
    this.#markTime[n % size] = now;
    this.#marks++;
  }

  /**
   * Wall time the sample at `position` was written: the first mark at or past it (the write that
   * carried it). Undefined when older than the ring or not yet written.
   */
  writtenAt(position: number): number | undefined {
    const size = this.#markSample.length;
    const oldest = Math.max(0, this.#marks - size);
    let lo = oldest;
    let hi = this.#marks - 1;
    if (hi < lo || position > (this.#markSample[hi % size] ?? 0)) return undefined;
    if (this.#marks > size && position <= (this.#markSample[oldest % size] ?? 0) && oldest > 0) return undefined;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.#markSample[mid % size] ?? 0) >= position) hi = mid;
      else lo = mid + 1;
    }
    return this.#markTime[lo % size];
  }

  /** A server message of the current socket, before the session applies it (`inFlight`: sent, not acknowledged). */
  heard(message: ServerMessage, now: number, inFlight: number, acked: number): void {
    if (message.type === 'audio.ack') this.#ackLag.add(inFlight / SAMPLES_PER_MS);
    else if (message.type === 'transcript.partial') this.#latency(this.#partial, acked, now);
    else if (message.type === 'transcript.line' && typeof message.line.endMs === 'number') this.#latency(this.#final, Math.round(message.line.endMs * SAMPLES_PER_MS), now);
    else if (message.type === 'pong' && message.id === this.#rttId && this.#rttId !== undefined) {
      this.#rtt.add(now - this.#rttSentAt);
      this.#rttId = undefined;
    }
  }

  #latency(window: HealthWindow, position: number, now: number): void {
    if (position <= 0) return;
    const written = this.writtenAt(position);
    if (written !== undefined) window.add(Math.max(0, now - written));
  }

  /**
   * An action or decision the session runs (HealthNews): the report it makes due, if any. The session
   * emits it (a snapshot of that kind).
   */
  note(news: HealthNews, now: number): HealthReportKind | undefined {
    switch (news.do) {
      case 'reconnecting':
        return this.#lost(news.reason, news.code, now) ? 'lost' : undefined;
      case 'retry':
        return news.flapping !== undefined && this.#flappingFound(news.flapping.reason) ? 'connection' : undefined;
      case 'promote':
        return void this.#recycled(now);
      case 'health':
        return this.#ackVerdict(news.state, news.reason) ? 'connection' : undefined;
      case 'ready':
        return this.#ready(now) ? 'reconnected' : undefined;
      case 'steady':
        return this.#steady(news.reason) ? 'connection' : undefined;
      default:
        return undefined;
    }
  }

  /** The ack watchdog's verdict. Returns true when it changes what the user was told. */
  #ackVerdict(state: 'healthy' | 'degraded', reason: string): boolean {
    if (this.#down || (this.#flapping && state === 'healthy')) return false;
    this.#connection = state;
    this.#reason = reason;
    return true;
  }

  stateChanged(reason: string): void {
    this.#sessionReason = reason;
  }

  /** The socket was lost and the session reconnects. Returns true for a new outage (a `lost` report is due). */
  #lost(cause: string, closeCode: number | undefined, now: number): boolean {
    if (this.#down || !this.#everReady) return false;
    this.#down = true;
    this.#reconnects++;
    this.#last = { cause, ...(closeCode !== undefined ? { closeCode } : {}), lostAt: now, durationMs: null };
    this.#connection = 'degraded';
    this.#reason = `reconnecting: ${cause}`;
    this.#rttId = undefined;
    return true;
  }

  /**
   * The session handed over to the socket it opened on `socket.recycle` (make-before-break): a reconnect
   * with cause `recycled`, though the link never went down (the connection state stays as it is).
   */
  #recycled(now: number): void {
    this.#reconnects++;
    this.#last = { cause: 'recycled', lostAt: now, durationMs: null };
    this.#handoff = true;
  }

  /** A socket is ready. Returns true when it ended an outage or a handoff (a `reconnected` report is due). */
  #ready(now: number): boolean {
    this.#everReady = true;
    this.#nextRttAt = now; // a first round trip at once
    if (this.#handoff && !this.#down) {
      this.#handoff = false;
      if (this.#last !== null) this.#last = { ...this.#last, durationMs: now - this.#last.lostAt };
      return true;
    }
    this.#handoff = false;
    if (!this.#down) {
      if (this.#reconnects === 0 && this.#connection === 'healthy') this.#reason = 'connected';
      return false;
    }
    this.#down = false;
    if (this.#last !== null) this.#last = { ...this.#last, durationMs: now - this.#last.lostAt };
    this.#connection = this.#flapping ? 'flapping' : 'healthy';
    this.#reason = this.#flapping ? 'reconnected; the link is flapping' : 'reconnected';
    return true;
  }

  /** The reconnect policy found the link flapping: told (also while down) until a connection is stable. Returns true: a `connection` report is due. */
  #flappingFound(reason: string): boolean {
    this.#flapping = true;
    this.#connection = 'flapping';
    this.#reason = reason;
    return true;
  }

  /** A connection stayed ready for the stable window. Returns true when that ends a flapping run. */
  #steady(reason: string): boolean {
    if (!this.#flapping) return false;
    this.#flapping = false;
    if (this.#down) return false;
    this.#connection = 'healthy';
    this.#reason = reason;
    return true;
  }

  /**
   * The session's watch tick: the id of a round-trip ping to send now (a ready socket only) and whether
   * the interval report is due.
   */
  tick(now: number, ready: boolean): { readonly ping: string | undefined; readonly report: boolean } {
    const ping = ready ? this.#rttPing(now) : undefined;
    return { ping, report: this.#reportDue(now) };
  }

  #rttPing(now: number): string | undefined {
    if (now < this.#nextRttAt || (this.#rttId !== undefined && now - this.#rttSentAt < HEALTH_TIMING.rttEveryMs)) return undefined;
    this.#nextRttAt = now + HEALTH_TIMING.rttEveryMs;
    this.#rttSentAt = now;
    return (this.#rttId = `${RTT_PREFIX}${String(++this.#rttSeq)}`);
  }

  #reportDue(now: number): boolean {
    if (now < this.#nextReportAt) return false;
    this.#nextReportAt = now + HEALTH_TIMING.everyMs;
    return true;
  }

  snapshot(kind: HealthReportKind, v: HealthView): SessionHealth {
    const s = v.stats;
    return {
      kind,
      state: this.#connection,
      reason: this.#reason,
      sessionState: v.state,
      sessionReason: this.#sessionReason,
      unackedMs: Math.round(s.unackedSamples / SAMPLES_PER_MS),
      bufferedMs: Math.round(s.bufferedSamples / SAMPLES_PER_MS),
      bufferFill: s.capacitySamples > 0 ? s.bufferedSamples / s.capacitySamples : 0,
      ackLagMs: this.#ackLag.stats(),
      partialLatencyMs: this.#partial.stats(),
      finalLatencyMs: this.#final.stats(),
      rttMs: this.#rtt.stats(),
      reconnects: this.#reconnects,
      lastReconnect: this.#last,
      skippedMs: Math.round(s.skippedSamples / SAMPLES_PER_MS),
      savedShare: s.producedSamples > 0 ? s.skippedSamples / s.producedSamples : 0,
      framesSent: v.framesSent,
      bytesSent: v.bytesSent,
      at: v.now,
    };
  }
}
