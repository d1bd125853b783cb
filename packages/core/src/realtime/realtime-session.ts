import { CLOSE_CODES, FRAME, REALTIME, SOCKET_DEFAULTS, SOCKET_FEATURES } from '../protocol.js';
import type { RealtimeNotice, RealtimeSession } from '../types/realtime.js';
import { AudioOutbox, type AudioStats, type Gap, type InputFormat } from './audio/outbox.js';
import { FramePump } from './audio/frame-pump.js';
import { SessionGate, gateOptions, type GateStep } from './audio/session-gate.js';
import { SourceClock, type SourceGateSink } from './audio/source-gate.js';
import { GuardedEmitter } from './plumbing/guarded-emitter.js';
import type { SessionLine } from './transcript/line-store.js';
import { SessionTranscript } from './transcript/transcript.js';
import { RealtimeError } from '../errors/realtime-error.js';
import { ValidationError } from '../errors/client-errors.js';
import { PAUSE, RESUME, finishesNow, operationGate, operationWait, refusedAtOnce, type OperationView, type StateOperation } from './operation-gates.js';
import { balanceError, exhaustedAt, failedBeforeReady, finalViewEnding, finishGaveUp, settle, unsavedEnding, type Ending, type Exhaustion } from './ending/ending.js';
import { sessionParts } from './options/parts.js';
import { finishOverRest, readSession } from './ending/rest.js';
import { SessionRecovery, type RecoveryAction, type RecoveryFacts } from './recovery/recovery.js';
import { socketAddress } from './socket/address.js';
import { freshCredentials } from './socket/credentials.js';
import { checkSessionOptions } from './options/checks.js';
import { ignoredMessage, parseServerMessage, type SessionReadyMessage } from './messages/server-messages.js';
import type { EmitAction, RealtimeFinishResult, RealtimeSessionEvents } from './session-events.js';
import { SessionIntent } from './session-intent.js';
import { SessionMessages, type MessageAction } from './messages/session-messages.js';
import { StateMachine, type SessionState, type StateChange } from './session-state.js';
import { resolveWebSocket, type SocketTransport } from './socket/transport.js';
import { SessionConnection, type ConnectionDecision } from './socket/connection.js';
import type { OperationOptions, RealtimeSessionInit } from './options/options.js';
import { HealthMeter, type HealthNews, type HealthReportKind, type SessionHealth } from './health/health-meter.js';
import { logSession, type LogWrite } from './session-logger.js';
import { TimerSet } from './plumbing/timer-set.js';
import { Waiters, invalidTimeout } from './plumbing/waiters.js';

export { socketUrlFor } from './socket/address.js';

/**
 * A realtime session over the socket: audio in, lines out, never losing a sample the server has not
 * acknowledged. The one owner of the state, the socket, the timers and REST: the helpers return what to
 * do and this class does it (README.md here: who decides, the machine, the handshake per socket).
 * Callbacks of a socket no longer current (its transport id) and partials of an epoch already left are
 * dropped; every await re-checks the state.
 */
export class RealtimeSocketSession extends GuardedEmitter<RealtimeSessionEvents> {
  readonly sessionId: string;

  readonly #init: RealtimeSessionInit;
  readonly #machine: StateMachine;
  readonly #outbox: AudioOutbox;
  readonly #transcript = new SessionTranscript();
  readonly #now: () => number;
  readonly #sender: FramePump;
  readonly #recovery: SessionRecovery;
  readonly #waiters = new Waiters();
  readonly #timers = new TimerSet();
  /** The sockets (current, standby) and the watch of the current one (socket/connection.ts): decisions for the session to run. */
  readonly #connection: SessionConnection;
  /** Cancels the watch tick of the current socket (#check). */
  #stopWatch: (() => void) | undefined;
  /** Latencies, lags, round trips and reconnects behind `health` (health/health-meter.ts). */
  readonly #health = new HealthMeter();
  /** The `logger` option's writer (redacting), for records no event carries. */
  readonly #log: LogWrite | undefined;
  /** The `gate` option's voice gate over the audio written (audio/session-gate.ts), or undefined. */
  readonly #gate: SessionGate | undefined;
  readonly #peek = (from: number, out: Int16Array): number => this.#outbox.peek(from, out);
  /** A capture source that gates itself (gateSource()): its frames to positions. */
  #source: SourceClock | undefined;
  /** Digital silence for a source's skipped frames, made at the first skip. */
  #silence: Float32Array | undefined;

  /** A REST finish is under way: reconnect attempts stand aside. */
  #restFinishing = false;
  readonly #intent = new SessionIntent();
  readonly #messages = new SessionMessages();
  /** The recording segment audio goes in: set by session.ready and session.resumed (their `epoch` actions). */
  #epoch: number = REALTIME.firstEpoch;
  #result: RealtimeFinishResult | undefined;
  #failure: Error | undefined;
  /** close() ended the session: each call it cut short gets REALTIME_CLOSED under its own name. */
  #closedByClient = false;
  /** Set by session.notice BALANCE_EXHAUSTED: how the session ends once the final view arrives. */
  #exhausted: Exhaustion | undefined;
  #finishPromise: Promise<RealtimeFinishResult> | undefined;
  /** Aborted at the end (teardown): REST calls of the recovery stop with the session. */
  readonly #lifetime = new AbortController();
  readonly #onAbort = (): void => this.#end('closed', RealtimeError.aborted('session', this.#init.signal?.reason), 'aborted');

  constructor(init: RealtimeSessionInit) {
    super();
    this.#init = init;
    this.sessionId = init.sessionId;
    checkSessionOptions(init);
    const parts = sessionParts(init);
    this.#now = parts.now;
    this.#outbox = new AudioOutbox(parts.audio);
    const gate = gateOptions(init.gate);
    if (gate !== null) {
      this.#gate = new SessionGate(gate, this.#outbox.produced);
      this.#outbox.gate();
    }
    this.#sender = new FramePump(this.#outbox, parts.drain, this.#now);
    this.#connection = new SessionConnection({ ackWatch: init.ackWatch, connectTimeoutMs: parts.connectTimeoutMs, heartbeatTimeoutMs: init.heartbeatTimeoutMs });
    const { windowMs, restFinishReserveMs, stableWindowMs } = parts.recovery;
    this.#recovery = new SessionRecovery(init.reconnect, windowMs, restFinishReserveMs, stableWindowMs);
    this.#machine = new StateMachine((change) => this.#onStateChange(change));
    this.#log = init.logger === undefined ? undefined : logSession(this, init.logger, parts.log);
  }

  get state(): SessionState {
    return this.#machine.state;
  }

  /** Current epoch (recording segment). */
  get epoch(): number {
    return this.#epoch;
  }

  /** Lines so far, each once, with the supplements that arrived. */
  get lines(): readonly SessionLine[] {
    return this.#transcript.lines;
  }

  get notices(): readonly RealtimeNotice[] {
    return this.#transcript.notices;
  }

  get stats(): AudioStats {
    return this.#outbox.stats();
  }

  /** The health snapshot now (the same fields every `health` event carries; `kind` 'interval'). */
  get health(): SessionHealth {
    return this.#healthAs('interval');
  }

  #healthAs(kind: HealthReportKind): SessionHealth {
    return this.#health.snapshot(kind, { now: this.#now(), state: this.state, stats: this.#outbox.stats(), framesSent: this.#sender.framesSent, bytesSent: this.#sender.bytesSent });
  }

  /** Opens the first socket; resolves on session.ready, rejects when the session failed before it. */
  async start(): Promise<this> {
    const signal = this.#init.signal;
    if (signal?.aborted) throw RealtimeError.aborted('connect', signal.reason);
    signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#machine.set('connecting', 'connect()');
    try {
      this.#connection.use(await resolveWebSocket(this.#init.WebSocket));
    } catch (caught) {
      this.#end('failed', caught instanceof Error ? caught : RealtimeError.noWebSocket(), 'no WebSocket');
      throw caught;
    }
    if (this.#machine.terminal) throw this.#failureFor('connect') ?? RealtimeError.ended('connect', this.state);
    this.#openSocket();
    await this.#waiters.until(() => this.#connection.everReady, { call: 'connect', timeoutMs: Number.POSITIVE_INFINITY, failure: () => this.#failureFor('connect') });
    return this;
  }

  // ── Audio in ──────────────────────────────────────────────────────────────────────────────────────

  /**
   * Float32 (or PCM16 as an Int16Array) audio at the declared sampleRate and channels (interleaved). Returns the input samples
   * accepted (block.length); 0 when the session does not take audio: from pause() until resume(), from
   * finish() on, and once ended. Whether it is taken follows those calls, not the socket: while
   * reconnecting, audio is buffered if the session was streaming and dropped if it was paused or finishing.
   */
  write(block: Float32Array | Int16Array): number {
    if (!this.#takesAudio()) {
      this.#outbox.checkFloat(block); // a bad block is an error whatever the state
      return 0;
    }
    this.#outbox.writeFloat(block);
    this.#runGate();
    this.#pump();
    return block.length;
  }

  /**
   * Declares the rate, channels and resampler kernel of write() blocks, in place of the sampleRate and
   * channels options: for a writer that learns its rate only when it starts (a browser capture at its
   * AudioContext's rate), or whose device came back at another rate. The same format again is a no-op;
   * a different one before any audio or right after markDiscontinuity() (else REALTIME_INVALID_STATE);
   * the session, its positions and its unacknowledged audio carry on. An unsupported rate throws
   * DSP_UNSUPPORTED_RATE.
   */
  setInputFormat(format: InputFormat): void {
    const before = this.#outbox.inputFormat;
    this.#outbox.setInput(format);
    if (this.#outbox.inputFormat !== before) this.#source?.cut(this.#outbox.produced, this.#outbox.inputFormat.sampleRate);
  }

  /**
   * A discontinuity in the audio given to write(): what comes next does not follow what came before
   * (a mute, audio lost before it reached the writer, another source). The resampler's tail goes out
   * now, so the audio before the cut is complete; the next write() starts with a fresh filter, so no
   * sample sent mixes the two sides. Nothing is inserted: the server gets the two stretches back to
   * back, each resampled exactly as a stream of its own. Returns the 16 kHz samples the tail added; 0
   * with nothing written since the last cut, for writePcm16() (it does not resample), and when the
   * session does not take audio (pause() and finish() end the segment themselves).
   */
  markDiscontinuity(): number {
    if (!this.#takesAudio()) return 0;
    const produced = this.#outbox.endSegment();
    this.#source?.cut(this.#outbox.produced, this.#outbox.inputFormat.sampleRate);
    if (produced > 0) {
      this.#runGate();
      this.#pump();
    }
    return produced;
  }

  /**
   * PCM16 at 16 kHz mono, sent bit for bit. Same return rule as write(). write() and writePcm16()
   * alternate only at a discontinuity (REALTIME_INVALID_STATE inside a segment).
   */
  writePcm16(samples: Int16Array): number {
    if (!this.#takesAudio()) {
      this.#outbox.checkPcm16(samples);
      return 0;
    }
    this.#outbox.writePcm16(samples);
    this.#runGate();
    this.#pump();
    return samples.length;
  }

  /**
   * Resolves once `samples` more 16 kHz samples (default a quarter of bufferMs) fit in the retained
   * audio without dropping any the server has not acknowledged: the pacing for a writer faster than the
   * network (a file, a pipe), which otherwise overflows the buffer on a healthy socket (a `gap` with
   * cause `overflow`). Resolves at once when they fit, and while the session does not take audio
   * (paused, finishing, finished: write() would return 0). Rejects on `signal` (REALTIME_ABORTED),
   * `timeoutMs` (default none), and when the session failed or was closed (its error), so a writer
   * loop stops instead of spinning.
   */
  whenWritable(options: OperationOptions & { readonly samples?: number } = {}): Promise<void> {
    const wait = operationWait('whenWritable', options, Number.POSITIVE_INFINITY, () => this.#failureFor('whenWritable'));
    const kept = this.#outbox.keptSamples;
    const samples = options.samples ?? Math.floor(kept / 4);
    if (!Number.isInteger(samples) || samples < 0 || samples > kept) {
      return Promise.reject(new ValidationError([{ field: 'samples', rule: `must be a whole number of 16 kHz samples in [0, ${kept}] (bufferMs); whenWritable() got ${String(samples)}` }]));
    }
    // Ended other than finished: false, so the wait rejects with the session's error.
    const writable = (): boolean => (this.#machine.terminal ? this.state === 'finished' : !this.#takesAudio() || this.#outbox.writableSamples >= samples);
    return this.#waiters.until(writable, wait);
  }

  #takesAudio(): boolean {
    return this.#intent.accepting && this.state !== 'idle' && !this.#machine.terminal;
  }

  // ── Operations ────────────────────────────────────────────────────────────────────────────────────

  /**
   * Encodes the resampler's tail into this epoch, sends everything written so far, waits until the
   * server acknowledged it (at most drainTimeoutMs), then pauses with that exact capturedSamples.
   * Resolves once the server confirmed (session.paused). Audio written once it started is dropped (at
   * once when streaming; while the socket is down or a rotation completes it waits for that first).
   * A pause() that times out or is aborted before session.pause went out is withdrawn (back to
   * `streaming`); once it went out the pause proceeds (`pausing`, then `paused`: call resume()).
   */
  pause(options: OperationOptions = {}): Promise<void> {
    return this.#operate(PAUSE, options, () => {
      this.#intent.pauseAsked();
      this.#sender.newPause(); // the one sent on this socket earlier was answered already
      this.#outbox.endSegment();
      this.#endGate('pause');
      this.#drain(this.#sender.startDrain());
      this.#machine.set('pausing', 'pause()');
      this.#pump();
    });
  }

  /**
   * Resumes after pause(): the server starts the next epoch. Audio written from the call on is taken
   * (sent once the new epoch started). Survives a reconnect: a socket that comes back to a session still
   * paused sends session.resume again. Timed out or aborted before session.resume went out, it is
   * withdrawn (still `paused`, audio dropped); once it went out the resume proceeds.
   */
  resume(options: OperationOptions = {}): Promise<void> {
    return this.#operate(RESUME, options, () => {
      this.#intent.resumeAsked();
      this.#sendResume();
    });
  }

  /**
   * Finishes the session: encodes the resampler's tail, sends every remaining sample, waits for the
   * acknowledgement (at most drainTimeoutMs per socket, then the rest goes past the in-flight window),
   * sends session.finish with the exact capturedSamples and resolves with the final view, every notice
   * and the final lines. Always settles (default timeout 60 s: the server waits up to ~8 s for
   * supplements) and leaves no timer or listener behind. Repeated calls return the same promise. With the
   * socket down it keeps reconnecting, and finishes over REST only when the recovery window expired, the
   * reconnect policy gave up, or the deadline is restFinishReserveMs away (audio never arrived: a gap).
   */
  finish(options: OperationOptions = {}): Promise<RealtimeFinishResult> {
    if (this.#result !== undefined) return Promise.resolve(this.#result);
    if (this.#finishPromise !== undefined) return this.#finishPromise;
    if (this.#machine.terminal) return Promise.reject(this.#failureFor('finish') ?? RealtimeError.ended('finish', this.state));
    const wait = operationWait('finish', options, 60_000, () => this.#failureFor('finish'));
    const invalid = invalidTimeout('finish', wait.timeoutMs);
    if (invalid !== undefined) return Promise.reject(invalid);
    this.#intent.finishAsked();
    const wasPaused = this.state === 'paused';
    this.#outbox.flushResampler(); // after a pause() its tail went out already: nothing more then
    this.#endGate('finish');
    this.#drain(this.#sender.startDrain());
    if (finishesNow(this.state)) this.#machine.set('finishing', 'finish()');
    // Paused with audio the server did not take (a pause that went ahead undrained, or audio written
    // after resume() was asked): a new epoch takes it first.
    if (wasPaused && this.#outbox.unsent > 0) this.#sendResume();
    this.#recover(this.#recovery.finishRequested(this.#now() + wait.timeoutMs, this.#facts()));
    this.#pump();
    const settled = (): RealtimeFinishResult => this.#result as RealtimeFinishResult;
    const gaveUp = (caught: unknown): never => {
      this.#conclude(finishGaveUp(caught));
      throw caught;
    };
    return (this.#finishPromise = this.#waiters.until(() => this.#result !== undefined, wait).then(settled, gaveUp));
  }

  /** pause() or resume() (operation-gates.ts decides); `send` runs in the tick of the decision, so audio written right after follows it. */
  async #operate(op: StateOperation, options: OperationOptions, send: () => void): Promise<void> {
    const wait = operationWait(op.call, options, 30_000, () => this.#failureFor(op.call));
    const refused = refusedAtOnce(wait);
    if (refused !== undefined) throw refused;
    const can = (): boolean => op.canDecide(this.#operationView(op.call));
    if (!can()) await this.#waiters.until(can, wait);
    const gate = operationGate(op, this.#operationView(op.call));
    if (gate === 'done') return;
    if (gate !== 'go') throw gate;
    send();
    try {
      await this.#waiters.until(() => this.state === op.to, wait);
    } catch (caught) {
      this.#withdraw(op);
      throw caught;
    }
  }

  #operationView(call: string): OperationView {
    return { state: this.state, terminal: this.#machine.terminal, intent: this.#intent, failure: this.#failureFor(call) };
  }

  /** The session's failure as `call` reports it: a close() names the call it cut short. */
  #failureFor(call: string): Error | undefined {
    if (this.#failure === undefined) return undefined;
    return this.#closedByClient ? RealtimeError.closed(call) : this.#failure;
  }

  /** pause() or resume() gave up: withdrawn unless its message went out on the live socket (then it proceeds). */
  #withdraw(op: StateOperation): void {
    const id = this.#readySocket()?.id;
    if (!op.withdraws(this.#operationView(op.call), op.call === 'pause' ? this.#sender.sent.pauseSentOn(id) : this.#sender.sent.resumeSentOn(id))) return;
    if (op.call === 'resume') return this.#intent.withdrawResume(); // still `paused`, audio dropped
    this.#intent.withdrawPause();
    if (this.state === 'pausing') this.#machine.set('streaming', 'pause() withdrawn before session.pause went out');
    this.#pump();
  }

  /**
   * A plain disconnect: the socket closes and the session object ends in state `closed`. The server
   * keeps the session (not finished, not charged) until its recovery window passes; finish it over
   * REST to save it. Pending operations reject with REALTIME_CLOSED.
   */
  close(): void {
    if (this.#machine.terminal) return;
    this.#closedByClient = true;
    this.#end('closed', RealtimeError.closed('close'), 'closed by the client');
  }

  /** Captured ranges declared lost so far (see the `gap` event), merged. */
  get gaps(): ReadonlyArray<readonly [number, number]> {
    return this.#outbox.gaps;
  }

  // ── Socket lifecycle ──────────────────────────────────────────────────────────────────────────────

  /** A new current socket, or (standby) the next one while the current one still works. */
  #openSocket(standby = false): void {
    if (this.#machine.terminal) return;
    const c = this.#connection;
    const address = socketAddress({ ...this.#init, ...c.credentials }, c.headers);
    this.#log?.('debug', 'socket.open', { transportId: c.nextId, standby, ...address });
    const opened = c.open(address, {
      onText: (t, text) => this.#onText(t, text),
      onClose: (t, code, reason) => this.#connect(c.closed(t, code, `socket closed ${code}${reason === '' ? '' : ` ${reason}`}`)),
    }, standby, this.#now());
    if (opened instanceof Error) return standby ? undefined : this.#end('failed', opened, 'socket refused');
    if (opened !== undefined && !standby) this.#watchTicks();
  }

  /**
   * socket.recycle: the next socket while the current one still works, with fresh credentials when a
   * provider is given (a socket token may have expired since the last socket). A provider that fails
   * leaves it the current ones; the reconnect after 4002 asks the provider again. Not wanted any more
   * once the socket that got the notice was replaced meanwhile; dropped if not ready in time.
   */
  async #openStandby(closeInMs: number): Promise<void> {
    const c = this.#connection;
    const noticed = c.current;
    const wanted = (): boolean => c.wantsStandby(noticed, { terminal: this.#machine.terminal, restFinishing: this.#restFinishing });
    if (!wanted()) return;
    const provider = this.#init.credentials;
    if (provider !== undefined) {
      const fresh = await settle(() => freshCredentials(provider));
      if (fresh.ok) c.credentials = fresh.value;
      if (!wanted()) return;
    }
    this.#openSocket(true);
    const standby = c.standby;
    if (standby !== undefined) this.#later(c.standbyDeadlineMs(closeInMs), () => this.#connect(c.standbyDue(standby, closeInMs)));
  }

  /** Runs what the connection decided about the sockets, in order (socket/connection.ts). */
  #connect(decisions: readonly ConnectionDecision[]): void {
    for (const d of decisions) {
      this.#noteHealth(d);
      switch (d.do) {
        case 'promote':
          // The standby is current (not ready until its session.ready); the old one is let go.
          this.#connection.promote(d.socket, this.#now());
          this.#recovery.handoff();
          this.#watchTicks();
          break;
        case 'drop':
          return this.#onLost(d.code, d.reason, d.refusedStatus, d.terminate);
        case 'forget':
          d.close?.close(CLOSE_CODES.normal, 'standby not ready');
          this.emit('debug', { kind: d.kind, detail: d.detail });
          break;
        case 'probe':
          this.#readySocket()?.sendJson({ type: 'ping', id: d.id });
          break;
        case 'health':
          break; // the health meter took it (#noteHealth)
      }
    }
  }

  /** The socket is gone (refusedStatus: of its refused upgrade) or believed dead (`terminate`: no close will come): recovery decides. */
  #onLost(code: number | undefined, reason: string, refusedStatus?: number, terminate = false): void {
    this.#connection.lose(terminate);
    this.#stopWatch?.();
    if (this.#machine.terminal) return;
    this.#recover(this.#recovery.lost(code, reason, refusedStatus, this.#facts()));
  }

  /** What recovery is told: the session as it is now. */
  #facts(): RecoveryFacts {
    const { state, terminal } = this.#machine;
    return { state, terminal, finishRequested: this.#intent.finish, socketReady: this.#connection.ready, hasRest: this.#init.rest !== undefined, canRefresh: this.#init.credentials !== undefined, now: this.#now() };
  }

  /** Runs what SessionRecovery decided, in order. */
  #recover(actions: readonly RecoveryAction[]): void {
    for (const action of actions) {
      switch (action.do) {
        case 'reconnecting':
          if (this.state !== 'connecting') this.#machine.set('reconnecting', action.reason);
          this.#noteHealth(action);
          break;
        case 'retry':
          this.emit('reconnecting', action.info);
          this.#noteHealth(action);
          this.#later(action.delayMs, () => {
            this.#recovery.attemptStarted();
            void this.#reconnect();
          });
          break;
        case 'fail':
          this.#end('failed', action.error, action.reason);
          break;
        case 'finishOverRest':
          void this.#finishOverRest(action.why, action.expired);
          break;
        case 'readFinalView':
          void this.#readFinalView(action.reason);
          break;
        case 'finished':
          this.#onFinished(action.view, action.reason);
          break;
        case 'openSocket':
          this.#openSocket();
          break;
        case 'checkDeadline':
          this.#later(action.delayMs, () => this.#recover(this.#recovery.finishDeadlineDue(this.#facts())));
          break;
      }
    }
  }

  /** One attempt: read the session over REST when we can (it may have ended meanwhile), then the socket. */
  async #reconnect(): Promise<void> {
    const waiting = (): boolean => !this.#restFinishing && (this.state === 'reconnecting' || this.state === 'connecting');
    if (!waiting()) return;
    const provider = this.#init.credentials;
    const fresh = provider === undefined ? undefined : await settle(() => freshCredentials(provider));
    if (fresh !== undefined && !fresh.ok) return this.#recover(this.#recovery.credentialsFailed(fresh.caught, this.#facts()));
    if (fresh !== undefined) this.#connection.credentials = fresh.value;
    if (!waiting()) return;
    const rest = this.#init.rest;
    if (rest === undefined || !this.#connection.everReady) return this.#openSocket();
    const read = await readSession(rest, this.sessionId, this.#lifetime.signal);
    if (!read.ok) this.#recover(this.#recovery.viewFailed(read.caught, this.#facts()));
    else if (waiting()) this.#recover([this.#recovery.viewRead(read.value)]);
  }

  /** Saves the result over REST (ending/rest.ts): from `finishing`, reconnect attempts standing aside. */
  async #finishOverRest(why: string, expired: boolean): Promise<void> {
    const rest = this.#init.rest;
    if (this.#machine.terminal || this.#restFinishing) return;
    this.#restFinishing = rest !== undefined;
    if (expired) this.emit('recovery.expired', { finishedOverRest: rest !== undefined });
    if (rest === undefined) return this.#conclude(unsavedEnding(why, expired));
    this.#intent.finishAsked();
    this.#machine.set('finishing', why);
    const ending = await finishOverRest(rest, this.sessionId, this.#outbox.produced, why, this.#lifetime.signal);
    this.#restFinishing = false;
    this.#conclude(ending);
  }

  /** Close 4409 without session.finished before it: read the final view over REST. */
  async #readFinalView(reason: string): Promise<void> {
    const rest = this.#init.rest;
    this.#conclude(finalViewEnding(reason, rest === undefined ? undefined : await readSession(rest, this.sessionId, this.#lifetime.signal)));
  }

  // ── Messages ──────────────────────────────────────────────────────────────────────────────────────

  #onText(t: SocketTransport, text: string): void {
    if (this.#machine.terminal) return;
    const parsed = parseServerMessage(text);
    const route = this.#connection.route(t, parsed.kind === 'message' ? parsed.message.type : parsed.kind, this.#now());
    if (route.to === 'nowhere') return route.forget === undefined ? undefined : this.#connect([route.forget]);
    if (route.promote !== undefined) this.#connect([{ do: 'promote', socket: route.promote }]);
    if (parsed.kind !== 'message') return void this.emit('debug', ignoredMessage(parsed)); // a type a newer server sends, or garbage
    const message = parsed.message;
    this.#health.heard(message, this.#now(), this.#outbox.inFlight, this.#outbox.acked);
    const reconnectAttempt = message.type === 'session.ready' ? this.#socketReady(message) : undefined;
    const actions = this.#messages.handle(message, { state: this.state, epoch: this.#epoch, transportId: t.id, intent: this.#intent, sent: this.#sender.sent, audio: this.#outbox, reconnectAttempt });
    for (const action of actions) this.#run(t, action);
    if (this.#connection.current === t || message.type === 'session.finished') this.emit('message', message);
    this.#waiters.check();
  }

  /** session.ready: the socket is ready, its watch runs, the pump starts afresh (a drain gets a new wait). Returns the reconnect attempt (none for the first). */
  #socketReady(m: SessionReadyMessage): number | undefined {
    // Skipped time goes as skip frames only to a server that takes them; else as the audio held for it.
    this.#outbox.skipFrames = m.features.includes(SOCKET_FEATURES.skipFrames);
    const reconnect = this.#connection.readied(this.#now(), m.heartbeatTimeoutMs ?? SOCKET_DEFAULTS.heartbeatTimeoutMs);
    const attempt = this.#recovery.recovered(m.recoveryWindowMs, this.#now());
    const t = this.#connection.current;
    this.#later(this.#recovery.stableWindowMs, () => this.#checkStable(t));
    this.#noteHealth({ do: 'ready' });
    this.#watchTicks();
    this.#drain(this.#sender.newSocket(this.#intent.finish || this.#intent.pause));
    return reconnect ? attempt : undefined;
  }

  /** Socket t's stable window ran out (a timer may run early by the session's clock: then the rest is waited). */
  #checkStable(t: SocketTransport | undefined): void {
    if (t === undefined || t !== this.#connection.readySocket) return;
    const rest = this.#recovery.stableInMs(this.#now());
    if (rest > 0) return this.#later(rest, () => this.#checkStable(t));
    const healthy = this.#recovery.steady(this.#now());
    if (healthy !== undefined) this.#noteHealth({ do: 'steady', reason: healthy.reason });
  }

  /** One action SessionMessages decided for a message from socket t. */
  #run(t: SocketTransport, action: MessageAction): void {
    switch (action.do) {
      case 'epoch':
        this.#epoch = action.epoch;
        return;
      case 'acknowledge':
        return this.#outbox.acknowledge(action.received);
      case 'rewind':
        return this.#outbox.rewindTo(action.to);
      case 'backpressure':
        return void this.emit('backpressure', this.#outbox.stats());
      case 'line':
        return this.#emitAll(this.#transcript.addLine(action.line));
      case 'supplement':
        return this.#emitAll(this.#transcript.supplement(action.message));
      case 'notice':
        return this.#emitAll(this.#transcript.addNotice(action.notice));
      case 'merge':
        return this.#emitAll(this.#transcript.merge(action.view));
      case 'state':
        if (action.intent === 'paused') this.#intent.paused();
        else if (action.intent === 'streaming') this.#intent.streaming();
        this.#machine.set(action.to, action.reason);
        return;
      case 'resume':
        return this.#sendResume();
      case 'pump':
        return this.#pump();
      case 'resumed':
        this.#sender.resumeAnswered();
        this.#intent.resumeTaken();
        return;
      case 'pong':
        t.sendJson({ type: 'pong', id: action.id });
        return;
      case 'probeAnswered':
        return this.#connection.answered(action.id, this.#now());
      case 'finished':
        return this.#onFinished(action.view, action.reason);
      case 'exhausted':
        return this.#onBalanceExhausted(action.notice);
      case 'recycle':
        return void this.#openStandby(action.closeInMs);
      case 'resync':
        t.close(CLOSE_CODES.normal, 'resync');
        this.#onLost(undefined, action.reason);
        return;
      case 'emit':
        return this.#emitAction(action);
    }
  }

  /** Events a helper returned (the transcript's news, a message's event), in order. */
  #emitAll(actions: Iterable<EmitAction>): void {
    for (const action of actions) this.#emitAction(action);
  }

  #emitAction(action: EmitAction): void {
    (this.emit as (type: string, payload: unknown) => boolean)(action.event, action.payload);
  }

  /** Audio declared lost (an overflow, a REST finish, the balance): a `gap` each, in the epoch it happened in. */
  #tellGaps(gaps: readonly Gap[]): void {
    for (const gap of gaps) this.emit('gap', { ...gap, epoch: this.#epoch });
  }

  /** session.resume {epoch} once per socket (a rotation, or resume() after pause()). */
  #sendResume(): void {
    this.#sender.resume(this.#readySocket(), this.#epoch);
  }

  // ── The voice gate (the `gate` option) ────────────────────────────────────────────────────────────

  /** The gate's decisions on the audio written since the last call, applied to the outbox in order. */
  #runGate(): void {
    const gate = this.#gate;
    if (gate === undefined) return;
    for (let step = gate.step(this.#outbox.produced, this.#peek); step !== null; step = gate.step(this.#outbox.produced, this.#peek)) this.#applyGate(step);
  }

  /**
   * @internal For a capture source that runs its own voice gate (the AudioWorklet's): the sink it
   * writes through instead of write() (audio/source-gate.ts). Audio written to the session directly
   * before this is sent as ever. Not with the `gate` option (REALTIME_INVALID_STATE): one gate decides.
   */
  gateSource(): SourceGateSink {
    if (this.#gate !== undefined) throw new RealtimeError('REALTIME_INVALID_STATE', 'the session runs its own voice gate (the gate option): a source that gates itself needs a session without it');
    if (this.#source !== undefined) throw new RealtimeError('REALTIME_INVALID_STATE', 'gateSource() was called already: one source gates a session');
    const outbox = this.#outbox;
    outbox.gate();
    const clock = (this.#source = new SourceClock(outbox.produced, outbox.inputFormat.sampleRate));
    return {
      write: (block) => {
        const taken = this.#takesAudio() ? block.length : 0;
        if (taken === 0) return this.write(block);
        outbox.writeFloat(block);
        const to = clock.wrote(block.length / outbox.inputFormat.channels);
        if (to > outbox.decided) outbox.decide(outbox.decided, to);
        this.#pump();
        return taken;
      },
      skip: (frames) => {
        if (!Number.isInteger(frames) || frames < 0) throw new RealtimeError('REALTIME_INVALID_STATE', `skip() takes a whole number of input frames, got ${String(frames)}`);
        if (!this.#takesAudio() || frames === 0) return 0;
        this.#writeSilence(frames);
        const [from, to] = clock.skipped(frames);
        if (from > outbox.decided) outbox.decide(outbox.decided, from);
        if (to > outbox.decided) outbox.decide(to, to);
        this.#pump();
        return frames;
      },
      speech: (event, frame) => {
        if (this.#machine.terminal) return;
        if (event === 'speech.end') this.#outbox.sendSkipNow();
        this.emit(event, { sample: clock.position(frame) });
        this.#pump();
      },
    };
  }

  /** A source's skipped frames as digital silence in the outbox (what a server without skip frames gets). */
  #writeSilence(frames: number): void {
    const outbox = this.#outbox;
    if (outbox.writesPcm16) {
      for (let left = frames; left > 0; left -= 4096) outbox.writePcm16(new Int16Array(Math.min(left, 4096)));
      return;
    }
    const channels = outbox.inputFormat.channels;
    const silence = (this.#silence ??= new Float32Array(4096 * 8));
    const most = Math.floor(silence.length / channels);
    for (let left = frames; left > 0; left -= most) outbox.writeFloat(silence.subarray(0, Math.min(left, most) * channels));
  }

  /**
   * pause() or finish(): the gate decides the rest. What it holds back (at most its pre-roll) is sent at
   * a pause, since speech right after the resume would need it as its pre-roll; at a finish it is
   * trailing silence: skipped time.
   */
  #endGate(at: 'pause' | 'finish'): void {
    const gate = this.#gate;
    if (gate === undefined) {
      // A source that gates itself decided as it wrote; what the resampler's tail added is sent.
      const produced = this.#outbox.produced;
      if (this.#source !== undefined && produced > this.#outbox.decided) this.#outbox.decide(this.#outbox.decided, produced);
      return;
    }
    this.#runGate();
    this.#applyGate(gate.end(this.#outbox.produced, this.#peek));
    // The rest is skipped time, from the 20 ms grid on (FRAME.skipGridSamples): the audio up to it is sent.
    const produced = this.#outbox.produced;
    const decided = this.#outbox.decided;
    if (produced <= decided) return;
    if (at === 'pause') return this.#outbox.decide(decided, produced);
    const grid = FRAME.skipGridSamples;
    const from = Math.min(produced, decided % grid === 0 ? decided : decided + grid - (decided % grid));
    this.#outbox.decide(decided, from);
    this.#outbox.decide(produced, produced);
  }

  #applyGate(step: GateStep): void {
    if (step.sendTo > this.#outbox.decided) this.#outbox.decide(step.skipTo, step.sendTo);
    const edges = step.edges;
    if (edges === null) return;
    for (const edge of edges) {
      // The utterance ended: the skip after it goes out now, so the server commits its line there.
      if (edge.event === 'speech.end') this.#outbox.sendSkipNow();
      this.emit(edge.event, { sample: edge.sample });
    }
  }

  /** Sends what the state and the in-flight window allow, on the socket that is ready (see FramePump). */
  #pump(): void {
    this.#health.wrote(this.#outbox.produced, this.#now());
    const { gaps, firstFrame } = this.#sender.pump({ socket: this.#readySocket(), state: this.state, epoch: this.#epoch });
    if (gaps !== undefined) this.#tellGaps(gaps);
    if (firstFrame !== undefined) this.emit('first.frame', firstFrame);
  }

  /**
   * A drain started (pause(), finish(), or one carried to a new socket): pump again once its wait ran out.
   * Node times a timer from the loop's cached clock, which lags when the loop was busy, so it can run
   * before the deadline by the session's clock: then the rest is waited too.
   */
  #drain(pumpAfterMs: number | undefined): void {
    if (pumpAfterMs === undefined) return;
    this.#later(pumpAfterMs, () => {
      this.#pump();
      const left = this.#sender.drainLeftMs();
      if (left > 0) this.#drain(left + 1);
    });
  }

  #readySocket(): SocketTransport | undefined {
    return this.#connection.readySocket;
  }

  /** The balance is used up: nothing more is sent or taken, and the final view ends it (see Exhaustion). */
  #onBalanceExhausted(notice: RealtimeNotice): void {
    if (this.#machine.terminal || this.#exhausted !== undefined) return;
    const receivedSamples = exhaustedAt(notice, this.#outbox.ackedServer);
    this.#intent.finishAsked();
    this.#sender.halt();
    const notAccepted = this.#outbox.declareRefused(receivedSamples);
    this.#tellGaps(this.#outbox.takeGaps());
    const exhausted = (this.#exhausted = { receivedSamples, notAccepted });
    if (finishesNow(this.state)) this.#machine.set('finishing', 'balance exhausted');
    this.emit('balance.exhausted', { ...exhausted, notice, error: balanceError(exhausted) });
  }

  /** The final view arrived (socket, REST, or read after the server finished it): the session ends. */
  #onFinished(view: RealtimeSession, reason: string): void {
    if (this.#machine.terminal) return;
    const exhausted = this.#exhausted;
    // Audio captured past the server's final cursor never arrived: declared (TRANSPORT_GAP there). After
    // the balance ran out that range was declared refused already.
    if (exhausted === undefined) {
      this.#outbox.declareUndelivered(Number(view.usage.receivedSamples));
      this.#tellGaps(this.#outbox.takeGaps());
    }
    this.#emitAll(this.#transcript.merge(view)); // the lines and notices stay readable whichever way it ends
    // Balance used up: the end is the typed error, whose `session` is this final view with the charge.
    if (exhausted !== undefined) return this.#end('failed', balanceError(exhausted, view), 'balance exhausted');
    this.#result = { session: view, notices: [...this.#transcript.notices], lines: this.#transcript.lines, reason };
    this.#failure = failedBeforeReady(view, this.#connection.everReady);
    this.#machine.set('finished', reason);
  }

  /** Applies an ending decided elsewhere (ending/ending.ts, SessionRecovery). */
  #conclude(ending: Ending): void {
    if (ending.to === 'finished') this.#onFinished(ending.view, ending.reason);
    else this.#end(ending.to, ending.error, ending.reason);
  }

  // ── Liveness, timers, state, teardown ─────────────────────────────────────────────────────────────

  /** (Re)starts the one watch tick of the current socket, at the rate the watch asks for. */
  #watchTicks(): void {
    this.#stopWatch?.();
    this.#stopWatch = this.#timers.every(this.#connection.tickMs, () => this.#check());
  }

  /** The watch tick (socket/connection.ts): probe, tell the health, or drop a dead socket without waiting for a close that will not come. */
  #check(): void {
    const decisions = this.#connection.check({ now: this.#now(), state: this.state, inFlightSamples: this.#outbox.inFlight, acked: this.#outbox.acked });
    this.#connect(decisions);
    if (decisions.some((d) => d.do === 'drop')) return;
    const t = this.#readySocket();
    const due = this.#health.tick(this.#now(), t !== undefined);
    if (due.ping !== undefined) t?.sendJson({ type: 'ping', id: due.ping });
    if (due.report) this.#report('interval');
  }

  /** What the health meter takes from the actions and decisions run (health/health-meter.ts): a report when it is due. */
  #noteHealth(news: HealthNews): void {
    const kind = this.#health.note(news, this.#now());
    if (kind !== undefined) this.#report(kind);
  }

  /** One `health` event: the snapshot now, and why it went out. */
  #report(kind: HealthReportKind): void {
    this.emit('health', this.#healthAs(kind));
  }

  /** A timer that teardown clears and that never runs after the end. */
  #later(ms: number, run: () => void): void {
    this.#timers.later(ms, () => {
      if (!this.#machine.terminal) run();
    });
  }

  /** The machine's own work first (teardown, waiters), the user's listeners last: whatever they do (GuardedEmitter catches a throw), every wait settles. */
  #onStateChange(change: StateChange): void {
    this.#health.stateChanged(change.reason);
    if (this.#machine.terminal) this.#teardown();
    this.#waiters.check();
    // Terminal without the awaited condition (e.g. pause() when the session finished): nothing waits forever.
    if (this.#machine.terminal) this.#waiters.rejectAll((call) => this.#failureFor(call) ?? RealtimeError.ended(call, this.state));
    this.emit('state', change);
  }

  /** The end other than `finished`: `closed` by the user, `failed` otherwise. Pending waits reject with `error`. */
  #end(to: 'closed' | 'failed', error: Error, reason: string): void {
    if (this.#machine.terminal) return;
    this.#failure = error;
    this.#machine.set(to, reason);
  }

  /** Terminal: close the socket, clear every timer, remove the abort listener. */
  #teardown(): void {
    this.#connection.closeAll(this.state);
    this.#timers.clear(); // the watch tick too
    this.#init.signal?.removeEventListener('abort', this.#onAbort);
    this.#lifetime.abort(this.#failure ?? RealtimeError.closed('operation'));
  }
}
