import { endianness } from 'node:os';
import type WebSocket from 'ws';
import { isApiError } from '../../errors.js';
import { CLOSE_CODES, decodeFrameHeader, FRAME, REALTIME_SPENDING, SOCKET_FEATURES, type SocketErrorCode } from '@soundclone/core/internal';
import type { SessionEvent } from '../session/audio.js';
import type { RealtimeSessions, Session } from '../session/sessions.js';
import { dec } from '../../util/decimal.js';
import { LIVE_STATE } from '../../protocol.js';
import { AckThrottle } from './ack-throttle.js';
import { chargeWorkTurn, nextWorkTurn, workTurnOpen } from '../work-turns.js';
import { Heartbeat } from './heartbeat.js';
import { Outbox } from './outbox.js';
import { SocketLifetime } from './lifetime.js';
import { errorMessage, lineMessage, noticeMessage, parseClientMessage, resumeEpoch, supplementMessage, type ServerMessage } from './messages.js';
import type { SocketConfig, SocketLogEntry } from './config.js';
import type { SocketFaults } from './faults.js';
// Real time even under a test's fake timers (util/real-timers.ts).
import { setTimeout, clearTimeout, clearImmediate } from '../../util/real-timers.js';

export type { SocketConfig, SocketLogEntry } from './config.js';

const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * One socket attached to one session. It turns binary frames into `feed` calls, JSON into
 * the same pause/finish the REST routes use, and session events into messages. Everything it arms
 * (heartbeat, ack timer, read-resume timer, session subscription) is released in `dispose`, which runs
 * exactly once on every path that ends the socket.
 *
 *   open --attach ok--> preparing (the recogniser loads) --> ready (session.ready sent)
 *        --close/timeout/replaced/finished--> disposed
 *   open --attach refused (not found, finished, expired)--> error + close 4404/4409/4410
 *   preparing --the recogniser failed (session FAILED)--> session.finished + close 4409
 *   ready --socketLifetimeMs (socket.recycle before it)--> audio.ack + close 4002
 *
 * Frames are handled in the order they arrive, synchronously while the node's work budget of this
 * loop iteration lasts (work-turns.ts; past it they wait in `inbox`, the socket paused, for a later
 * iteration). The one exception to the order: a frame whose
 * spending check must wait for the store (an engine with transactions, at most once per started
 * second; the in-memory and journal engines never wait) holds the socket's later messages in
 * `behindSpending`, frames and text alike, until the store answered; then that frame is fed again
 * and the held ones follow in order:
 *
 *   frame N --feed: pending--> [N+1, finish, ping, ...] held, socket paused
 *           --answer--> frame N fed again (checked against the session as it is now) --> held, in order
 *           --store failed--> SERVICE_UNAVAILABLE for N (nothing stored) --> held, in order
 *           --socket ended--> N and the held dropped unstored (the client resends from the cursor)
 */
export class Connection {
  private unsubscribe: (() => void) | undefined;
  private heartbeat: Heartbeat | undefined;
  /** The socket lifetime limit, when the server has one (lifetime.ts). */
  private lifetime: SocketLifetime | undefined;
  private readTimer: ReturnType<typeof setTimeout> | undefined;
  /** The inbox's next turn when the node's work budget was spent (work-turns.ts). */
  private turnTimer: NodeJS.Immediate | undefined;
  /** Messages waiting, in order: a slow-reads fault delays processing, or the node's work budget of this loop iteration is spent. */
  private readonly inbox: Array<{ readonly buffer: Buffer; readonly isBinary: boolean }> = [];
  /** Messages that came while the recogniser was being prepared, before session.ready. */
  private readonly early: Array<{ readonly buffer: Buffer; readonly isBinary: boolean }> = [];
  private preparing = false;
  /** Messages that came while a frame waited for the store's spending answer: handled after it, in order. */
  private readonly behindSpending: Array<{ readonly buffer: Buffer; readonly isBinary: boolean }> = [];
  private waitingForSpending = false;
  /**
   * The store failed a spending check: frames the client sent before it heard (SERVICE_UNAVAILABLE)
   * start past the cursor. Until a frame is accepted again their BEYOND_CURSOR is no mistake of the
   * client's and is not counted toward PROTOCOL_VIOLATION.
   */
  private storeFailed = false;
  private readonly acks: AckThrottle;
  /** Everything we send goes through here: bounded by the memory it holds (maxBufferedBytes). */
  private readonly outbox: Outbox;
  private lastUsageAt = -Infinity;
  private consecutiveErrors = 0;
  private halfOpen = false;
  private disposed = false;
  private attached = false;

  constructor(
    readonly id: string,
    private readonly ws: WebSocket,
    readonly session: Session,
    private readonly realtime: RealtimeSessions,
    private readonly config: SocketConfig,
    private readonly faults: SocketFaults,
    private readonly log: (kind: string, detail?: Record<string, unknown>) => void,
    private readonly onDisposed: (connection: Connection) => void,
  ) {
    this.acks = new AckThrottle(config.ackIntervalMs, () => faults.ackMode(session.id), () => this.sendAck());
    this.outbox = new Outbox(ws, config.maxBufferedBytes, (held) => this.onSlowConsumer(held));
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer | Buffer[] | ArrayBuffer, isBinary));
    ws.on('close', (code, reason) => {
      this.log('closed', { code, reason: reason.toString('utf8') });
      this.outbox.stop();
      this.dispose();
    });
    // A socket error is always followed by 'close'; listening keeps it from becoming an uncaught error.
    ws.on('error', (error) => this.log('socket-error', { message: error.message }));
  }

  /** Attaches to the session and sends session.ready, or refuses with a fatal error and a close code. */
  async start(): Promise<void> {
    const session = this.session;
    const deadlineBefore = session.recovery.deadline;
    const outcome = this.realtime.attach(session);
    if (outcome === 'finished') {
      // A client that reconnects after sending finish (or after a REST finish) still gets the final view.
      await session.finishing;
      if (this.disposed) return;
      this.send({ type: 'session.finished', session: this.realtime.view(session) });
      this.close(CLOSE_CODES.SESSION_FINISHED, 'session finished');
      return;
    }
    if (outcome === 'expired') {
      this.fatal('RECOVERY_WINDOW_EXPIRED', 'the recovery window passed; finish the session over REST to save the result', CLOSE_CODES.RECOVERY_WINDOW_EXPIRED);
      return;
    }
    this.attached = true;
    if (this.disposed) {
      // The socket closed while we were attaching: give the attachment back at once.
      this.realtime.detach(session);
      this.attached = false;
      return;
    }
    // The recogniser loads what it needs now (a PocketSphinx decoder, on a worker thread), not at
    // creation: a session nobody connects to holds none. Messages meanwhile wait in `early`.
    const preparing = this.realtime.prepare(session);
    if (preparing !== undefined) {
      this.preparing = true;
      await preparing;
      this.preparing = false;
      // A socket that closed meanwhile was detached by dispose.
      if (this.disposed) return;
    }
    // With the live state, session.ready's cursor is acknowledged by the client: report it only once Redis
    // holds it (writes of audio an earlier socket sent may still be on their way). Messages wait meanwhile.
    const live = session.live;
    if (live !== undefined) {
      this.preparing = true;
      await live.settled();
      this.preparing = false;
      if (this.disposed) return;
      if (live.lost) {
        this.log('moved');
        this.close(CLOSE_CODES.SERVER_GOING_AWAY, LIVE_STATE.movedCloseReason, { discard: true });
        return;
      }
    }
    if (session.finishing !== undefined) {
      // The recogniser failed (the session is FAILED), or a REST finish came first.
      await session.finishing;
      if (this.disposed) return;
      this.send({ type: 'session.finished', session: this.realtime.view(session) });
      this.close(CLOSE_CODES.SESSION_FINISHED, 'session finished');
      return;
    }
    const events = session.audio.subscribe((event) => this.onSessionEvent(event));
    // With the live state an ack says only what it holds durably: each advance may be acknowledged.
    const durable = session.live?.onDurable(() => this.acks.schedule());
    this.unsubscribe = () => {
      events();
      durable?.();
    };
    this.heartbeat = new Heartbeat(
      this.config.heartbeatIntervalMs,
      this.config.heartbeatTimeoutMs,
      (id) => this.send({ type: 'ping', id }),
      () => this.onHeartbeatTimeout(),
    );
    this.heartbeat.start();
    const audio = session.audio;
    this.send({
      type: 'session.ready',
      connectionId: this.id,
      sessionId: session.id,
      transcriptionId: session.task.id,
      status: audio.state === 'CLOSED' ? session.task.status : audio.state,
      epoch: audio.epoch,
      accepting: audio.accepting,
      awaitingResume: audio.awaitingResume,
      receivedSamples: dec(audio.received),
      sentSamples: dec(audio.sent),
      capturedSamples: dec(audio.captured),
      recoveryWindowMs: this.realtime.recoveryWindowMs,
      recoveryDeadline: deadlineBefore === null ? null : new Date(deadlineBefore).toISOString(),
      heartbeatIntervalMs: this.config.heartbeatIntervalMs,
      heartbeatTimeoutMs: this.config.heartbeatTimeoutMs,
      ackIntervalMs: this.config.ackIntervalMs,
      maxFrameSamples: this.config.maxFrameSamples,
      socketLifetimeMs: this.realtime.socketLifetimeMs ?? null,
      features: this.faults.featuresHidden(session.id) ? [] : [SOCKET_FEATURES.skipFrames],
      session: this.realtime.view(session),
    });
    this.armLifetime();
    const early = this.early.splice(0);
    if (early.length > 0) {
      this.ws.resume();
      for (const message of early) this.accept(message.buffer, message.isBinary);
    }
  }

  /**
   * Closes with a code (fault injection, replacement, shutdown, finish). The close frame follows the
   * messages queued before it, unless `discard` drops them (a slow consumer); a peer that has not
   * taken it within `graceMs` is cut off.
   */
  close(code: number, reason: string, { graceMs = 1000, discard = false }: { graceMs?: number; discard?: boolean } = {}): void {
    if (this.disposed) return;
    if (this.halfOpen) {
      // A half-open path carries nothing, not even a close frame: just drop the TCP connection.
      this.outbox.stop();
      this.ws.terminate();
      this.dispose();
      return;
    }
    const closeFrame = (): void => {
      if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(code, reason);
    };
    if (discard) {
      this.outbox.stop();
      closeFrame();
    } else {
      this.outbox.whenDrained(closeFrame);
    }
    this.dispose();
    if (this.ws.readyState === this.ws.CLOSED) return;
    // A peer that never answers the close handshake (half-open, or not reading) must not keep the TCP
    // socket for ws's own 30 s close timeout; end it once the close frame had its chance to leave.
    const kill = setTimeout(() => this.ws.terminate(), graceMs);
    this.ws.once('close', () => clearTimeout(kill));
  }

  /**
   * With a socket lifetime limit: the notice, then at the limit the exact cut (the ack right before the
   * close, and nothing accepted after it: close() disposes at once) and close 4002.
   */
  private armLifetime(): void {
    const lifetimeMs = this.realtime.socketLifetimeMs;
    if (lifetimeMs === undefined) return;
    this.lifetime = new SocketLifetime(
      lifetimeMs,
      (closeInMs) => {
        this.log('recycle-notice', { closeInMs });
        this.send({ type: 'socket.recycle', closeInMs });
      },
      () => {
        if (this.disposed) return;
        this.acks.flush();
        this.log('recycled');
        this.close(CLOSE_CODES.SOCKET_RECYCLED, 'socket recycled');
      },
    );
    this.lifetime.start();
  }

  /**
   * Recycles this socket now (the node it came through drains): the ack, socket.recycle with no notice,
   * close 4002; the client opens its next socket at once, through the balancer.
   */
  recycleNow(): void {
    if (this.disposed) return;
    this.log('recycled', { via: 'draining node' });
    this.acks.flush();
    this.send({ type: 'socket.recycle', closeInMs: 0 });
    this.close(CLOSE_CODES.SOCKET_RECYCLED, 'socket recycled');
  }

  /** Fault: stop reading and writing without closing. */
  makeHalfOpen(): void {
    this.halfOpen = true;
    this.ws.pause();
  }

  /** Fault: rotation now. */
  rotateNow(): boolean {
    return this.session.audio.rotate();
  }

  /** Socket faults changed: a withheld ack may go now. */
  faultsChanged(): void {
    this.acks.faultsChanged();
  }

  private onMessage(data: Buffer | Buffer[] | ArrayBuffer, isBinary: boolean): void {
    if (this.disposed || this.halfOpen) return;
    const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (this.preparing) {
      // Before session.ready (a well-behaved client sends nothing yet): kept in order, and the socket
      // paused so at most what ws had already read waits here.
      this.early.push({ buffer, isBinary });
      this.ws.pause();
      return;
    }
    this.accept(buffer, isBinary);
  }

  private accept(buffer: Buffer, isBinary: boolean): void {
    this.heartbeat?.touch();
    if (this.inbox.length > 0 || this.faults.readDelayMs(this.session.id) > 0 || !workTurnOpen()) {
      // Later, in order, and the TCP socket paused meanwhile (the inbox holds at most what ws had
      // already read): a slow consumer (fault) takes one message per delay, so the client's send
      // buffer grows as it would against a struggling server; a spent work budget waits for the next
      // loop iteration, so timers (heartbeats, acks, lease renewals) run in between.
      this.inbox.push({ buffer, isBinary });
      this.ws.pause();
      this.scheduleInbox();
      return;
    }
    this.processTimed(buffer, isBinary);
  }

  private scheduleInbox(): void {
    if (this.readTimer !== undefined || this.turnTimer !== undefined || this.disposed) return;
    const delayMs = this.faults.readDelayMs(this.session.id);
    if (delayMs > 0) this.readTimer = setTimeout(() => this.drainInbox(), delayMs);
    else this.turnTimer = nextWorkTurn(() => this.drainInbox());
  }

  private drainInbox(): void {
    this.readTimer = undefined;
    this.turnTimer = undefined;
    if (this.disposed || this.halfOpen) return;
    if (this.faults.readDelayMs(this.session.id) > 0) {
      const next = this.inbox.shift();
      if (next !== undefined) this.processTimed(next.buffer, next.isBinary);
    } else {
      while (this.inbox.length > 0 && workTurnOpen() && !this.disposed && !this.halfOpen) {
        const next = this.inbox.shift() as { readonly buffer: Buffer; readonly isBinary: boolean };
        this.processTimed(next.buffer, next.isBinary);
      }
    }
    if (this.inbox.length > 0) this.scheduleInbox();
    else if (!this.waitingForSpending && !this.disposed) this.ws.resume();
  }

  /** process(), its time counted against the node's work budget of this loop iteration. */
  private processTimed(buffer: Buffer, isBinary: boolean): void {
    const started = performance.now();
    this.process(buffer, isBinary);
    chargeWorkTurn(performance.now() - started);
  }

  private process(buffer: Buffer, isBinary: boolean): void {
    if (this.waitingForSpending) {
      // Held in order behind the frame waiting for the store; the TCP socket paused meanwhile, so at
      // most what ws had already read (and the in-flight window) waits here.
      this.behindSpending.push({ buffer, isBinary });
      this.ws.pause();
      return;
    }
    try {
      if (isBinary) this.onFrame(buffer);
      else this.onText(buffer.toString('utf8')).catch((caught: unknown) => this.log('internal-error', { message: caught instanceof Error ? caught.message : String(caught) }));
    } catch (caught) {
      // Never crash the server on one socket's input; tell the client and keep going.
      this.log('internal-error', { message: caught instanceof Error ? caught.message : String(caught) });
      this.refuse('INTERNAL', 'internal error while handling a message');
    }
  }

  private onFrame(buffer: Buffer): void {
    if (!this.attached) return;
    const header = decodeFrameHeader(new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength), 0, buffer.byteLength);
    if (!header.ok) {
      this.refuse('BAD_FRAME', `malformed audio frame: ${header.reason}`, { reason: header.reason });
      return;
    }
    if (header.skip !== true && header.sampleCount > this.config.maxFrameSamples) {
      this.refuse('FRAME_TOO_LARGE', `a frame carries at most ${this.config.maxFrameSamples} samples`, { maxFrameSamples: this.config.maxFrameSamples, sampleCount: header.sampleCount });
      return;
    }
    const audio = this.session.audio;
    const outcome = header.skip === true
      ? this.realtime.skip(this.session, header.epoch, BigInt(header.startSample), header.sampleCount)
      : this.realtime.feed(this.session, header.epoch, BigInt(header.startSample), pcm16View(buffer, header.sampleCount));
    if (outcome.kind === 'pending') {
      this.waitForSpending(outcome.answer, buffer);
      return;
    }
    if (outcome.kind === 'rejected') {
      const messages: Record<typeof outcome.reason, string> = {
        NOT_ACCEPTING: 'the session does not accept audio now (paused, rotated awaiting session.resume, or finishing)',
        WRONG_EPOCH: `frames must carry the current epoch ${outcome.epoch}`,
        BEYOND_CURSOR: `gap: the frame starts at ${header.startSample} but the server has ${outcome.receivedSamples}; resend from there`,
        BALANCE_EXHAUSTED: `the account's balance was used up at sample ${outcome.receivedSamples}; no audio past it is accepted`,
      };
      const details = {
        epoch: outcome.epoch,
        receivedSamples: dec(outcome.receivedSamples),
        frameEpoch: header.epoch,
        startSample: String(header.startSample),
        accepting: audio.accepting,
      };
      if (
        outcome.reason === 'BALANCE_EXHAUSTED' ||
        (outcome.reason === 'NOT_ACCEPTING' && audio.state === 'ACTIVE' && audio.awaitingResume) ||
        (outcome.reason === 'BEYOND_CURSOR' && this.storeFailed)
      ) {
        // Frames in flight when the balance ran out, past a rotation the server started, or behind a
        // frame the store could not take, are no mistake of the client's (it cannot know yet; a
        // finishing client may have many on the wire): told, but never counted toward
        // PROTOCOL_VIOLATION (a 4400 would hide why).
        this.log('error', { code: outcome.reason });
        this.send(errorMessage(outcome.reason, messages[outcome.reason], details));
        return;
      }
      this.refuse(outcome.reason, messages[outcome.reason], details);
      return;
    }
    this.consecutiveErrors = 0;
    this.storeFailed = false;
    this.acks.schedule();
  }

  /** Frame `buffer` waits for the store's spending answer: everything after it is held (process). */
  private waitForSpending(answer: Promise<void>, buffer: Buffer): void {
    this.waitingForSpending = true;
    answer.then(
      () => this.spendingAnswered(buffer, undefined),
      (error: unknown) => this.spendingAnswered(buffer, { error }),
    );
  }

  private spendingAnswered(buffer: Buffer, failure: { readonly error: unknown } | undefined): void {
    this.waitingForSpending = false;
    // The socket ended meanwhile: the frame and those held behind it are dropped unstored; the
    // client resends from the cursor its next socket's session.ready reports (dispose cleared them).
    if (this.disposed || this.halfOpen) return;
    if (failure === undefined) {
      // Fed again: checked against the session as it is now (a REST pause or finish, a newer
      // socket's frames), and the guard answers this frame at once.
      this.processTimed(buffer, true);
    } else {
      this.storeUnavailable(buffer, failure.error);
    }
    while (!this.waitingForSpending && !this.disposed && !this.halfOpen) {
      if (!workTurnOpen() && this.behindSpending.length > 0) {
        // The rest waits for a later turn, ahead of what the inbox holds (it came before).
        this.inbox.unshift(...this.behindSpending.splice(0));
        this.scheduleInbox();
        return;
      }
      const next = this.behindSpending.shift();
      if (next === undefined) break;
      this.processTimed(next.buffer, next.isBinary);
    }
    if (!this.waitingForSpending && !this.disposed && this.inbox.length === 0) this.ws.resume();
  }

  /**
   * The store did not answer the spending check (a database unreachable): the frame is not stored and
   * the client is told it may resend from the cursor, a non-fatal, retryable SERVICE_UNAVAILABLE, not
   * a BALANCE_EXHAUSTED the balance never said. Not counted toward PROTOCOL_VIOLATION.
   */
  private storeUnavailable(buffer: Buffer, error: unknown): void {
    this.log('store-unavailable', { message: error instanceof Error ? error.message : String(error) });
    this.storeFailed = true;
    const header = decodeFrameHeader(new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength), 0, buffer.byteLength);
    const audio = this.session.audio;
    this.send(
      errorMessage('SERVICE_UNAVAILABLE', `the service could not take this frame now (its store did not answer); nothing was stored: resend from sample ${audio.received}`, {
        reason: REALTIME_SPENDING.storeUnavailableReason,
        epoch: audio.epoch,
        receivedSamples: dec(audio.received),
        ...(header.ok ? { frameEpoch: header.epoch, startSample: String(header.startSample) } : {}),
        accepting: audio.accepting,
      }),
    );
  }

  private async onText(text: string): Promise<void> {
    const message = parseClientMessage(text);
    if (message.kind === 'invalid') {
      this.refuse('BAD_JSON', `text frames must be JSON objects with a string "type" (${message.reason})`);
      return;
    }
    if (message.kind === 'unknown') {
      // Ignored by design (forward compatibility); visible in the server's socket log.
      this.log('unknown-message', { type: message.type });
      return;
    }
    if (!this.attached) return;
    const body = message.body;
    switch (message.type) {
      case 'ping':
        this.send({ type: 'pong', id: body['id'] ?? null });
        return;
      case 'pong':
        return;
      case 'session.captured':
        this.apiCall(() => this.realtime.recordCaptured(this.session, body));
        return;
      case 'session.pause':
        // The same implementation as POST …/pause; session.paused comes from the session event.
        this.apiCall(() => this.realtime.pause(this.session, body));
        return;
      case 'session.resume': {
        const epoch = resumeEpoch(body);
        if (typeof epoch !== 'number') {
          this.refuse('BAD_MESSAGE', `session.resume: ${epoch.field} ${epoch.rule}`, { violations: [epoch] });
          return;
        }
        const outcome = this.realtime.resume(this.session, epoch);
        if (outcome.kind === 'refused') {
          this.refuse(outcome.reason, outcome.reason === 'WRONG_EPOCH' ? `session.resume must name the current epoch ${outcome.epoch}` : 'the session is finishing or finished', { epoch: outcome.epoch });
          return;
        }
        this.consecutiveErrors = 0;
        // The client acknowledges this cursor: with the live state, once Redis holds it.
        const live = this.session.live;
        const resumed = (): void => this.send({ type: 'session.resumed', epoch: outcome.epoch, receivedSamples: dec(this.session.audio.received) });
        if (live === undefined) resumed();
        else void live.settled().then(() => !this.disposed && !live.lost && resumed());
        return;
      }
      case 'session.finish': {
        // The same implementation as POST …/finish: one settlement, however many callers race.
        // session.finished arrives through the session event (also for a REST finish).
        try {
          await this.realtime.finish(this.session, body);
        } catch (caught) {
          if (!this.disposed) this.apiFailure(caught);
        }
        return;
      }
    }
  }

  private apiCall(action: () => void): void {
    try {
      action();
      this.consecutiveErrors = 0;
    } catch (caught) {
      this.apiFailure(caught);
    }
  }

  private apiFailure(caught: unknown): void {
    if (isApiError(caught) && caught.code === 'SESSION_CLOSED') this.refuse('SESSION_CLOSED', caught.message);
    else if (isApiError(caught) && caught.code === 'INPUT_INVALID') this.refuse('BAD_MESSAGE', caught.message, caught.details);
    else throw caught;
  }

  private onSessionEvent(event: SessionEvent): void {
    switch (event.type) {
      case 'transcript.partial':
        // Each partial supersedes the last: skip it for a client that is not reading.
        if (this.outbox.heldBytes > this.config.partialSkipBufferedBytes) return;
        this.send({ type: 'transcript.partial', epoch: event.epoch, text: event.text });
        return;
      case 'transcript.line':
        this.send(lineMessage(event.line));
        return;
      case 'transcript.supplement':
        this.send(supplementMessage(event.line, event.kind));
        return;
      case 'usage.updated':
        // The ack first, so the client knows exactly where the old epoch ended.
        this.acks.flush();
        this.sendUsage(true);
        return;
      case 'session.paused':
        this.acks.flush();
        this.send({ type: 'session.paused', epoch: this.session.audio.epoch, receivedSamples: dec(this.session.audio.received), capturedSamples: dec(this.session.audio.captured) });
        return;
      case 'session.resumed':
        return;
      case 'session.notice':
        this.send(noticeMessage(event.notice));
        return;
      case 'session.finished':
        this.acks.flush();
        this.send({ type: 'session.finished', session: this.realtime.view(this.session) });
        this.close(CLOSE_CODES.SESSION_FINISHED, 'session finished');
        return;
      case 'session.moved':
        if (event.recycle === true) {
          // Handed over on purpose (a drain): its lease is free already, so the next socket, through the
          // balancer, reaches a node that takes the session over at once. The last ack says what Redis
          // holds; the client resends the rest there.
          this.log('recycled', { handedOver: true });
          this.acks.flush();
          this.send({ type: 'socket.recycle', closeInMs: 0 });
          this.close(CLOSE_CODES.SOCKET_RECYCLED, 'socket recycled');
          return;
        }
        // Not held here any more: the client reconnects (through the balancer) to the node that has it.
        this.log('moved');
        this.close(CLOSE_CODES.SERVER_GOING_AWAY, LIVE_STATE.movedCloseReason, { discard: true });
        return;
    }
  }

  private sendAck(): void {
    const now = performance.now();
    this.send({ type: 'audio.ack', epoch: this.session.audio.epoch, receivedSamples: dec(this.realtime.acknowledged(this.session)) });
    if (now - this.lastUsageAt >= this.config.usageIntervalMs) this.sendUsage(false);
  }

  private sendUsage(rotate: boolean): void {
    this.lastUsageAt = performance.now();
    const view = this.realtime.view(this.session);
    this.send({ type: 'usage.updated', rotate, epoch: this.session.audio.epoch, usage: view['usage'] });
  }

  /** A non-fatal error; too many in a row is a protocol violation. */
  private refuse(code: SocketErrorCode, message: string, details?: Record<string, unknown>): void {
    this.log('error', { code });
    this.consecutiveErrors += 1;
    if (this.consecutiveErrors > this.config.maxConsecutiveErrors) {
      this.fatal('PROTOCOL_VIOLATION', `more than ${this.config.maxConsecutiveErrors} refused frames or messages in a row`, CLOSE_CODES.PROTOCOL_VIOLATION);
      return;
    }
    this.send(errorMessage(code, message, details));
  }

  fatal(code: SocketErrorCode, message: string, closeCode: number): void {
    this.send(errorMessage(code, message, undefined, true));
    this.close(closeCode, code);
  }

  private onHeartbeatTimeout(): void {
    this.log('heartbeat-timeout');
    this.close(CLOSE_CODES.HEARTBEAT_TIMEOUT, 'heartbeat timeout');
  }

  private send(message: ServerMessage | ReturnType<typeof errorMessage>): void {
    if (this.halfOpen || this.ws.readyState !== this.ws.OPEN) return;
    this.outbox.send(JSON.stringify(message));
  }

  /**
   * More than maxBufferedBytes held for a client that does not read (docs/protocol.md "Memory and
   * limits"): nothing more is queued, the close frame 4429 goes right behind the in-flight window
   * (at most IN_FLIGHT_MAX_BYTES), and a client that still does not read within
   * slowConsumerGraceMs loses the TCP connection (it then sees 1006).
   */
  private onSlowConsumer(heldBytes: number): void {
    this.log('slow-consumer', { bufferedAmount: heldBytes });
    this.close(CLOSE_CODES.SLOW_CONSUMER, 'SLOW_CONSUMER', { graceMs: this.config.slowConsumerGraceMs, discard: true });
  }

  /** Releases everything this connection armed; the session's recovery window starts if none is left. */
  private dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.heartbeat?.stop();
    this.lifetime?.stop();
    this.acks.cancel();
    if (this.readTimer !== undefined) clearTimeout(this.readTimer);
    this.readTimer = undefined;
    if (this.turnTimer !== undefined) clearImmediate(this.turnTimer);
    this.turnTimer = undefined;
    this.inbox.length = 0;
    this.early.length = 0;
    this.behindSpending.length = 0;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.attached) this.realtime.detach(this.session);
    this.attached = false;
    this.onDisposed(this);
  }
}

/** The payload as Int16Array: a view when aligned on a little-endian host, else one copy. */
function pcm16View(buffer: Buffer, count: number): Int16Array {
  const offset = buffer.byteOffset + FRAME.headerBytes;
  if (LITTLE_ENDIAN && offset % 2 === 0) return new Int16Array(buffer.buffer, offset, count);
  const out = new Int16Array(count);
  for (let i = 0; i < count; i++) out[i] = buffer.readInt16LE(FRAME.headerBytes + i * 2);
  return out;
}
