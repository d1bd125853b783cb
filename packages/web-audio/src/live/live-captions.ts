import { attachCaptions, type AttachCaptionsOptions, type CaptureHealth, type RealtimeSocketOptions, type RealtimeSocketSession, type SessionLine, type StateChange } from '@soundclone/core';
import { WebAudioError } from '../errors.js';
import { attachSession, type BrowserSessionGrant } from '../session/attach-session.js';
import { startCapture, type StartCaptureOptions } from '../capture/start-capture.js';
import { openMicrophone } from '../capture/open-microphone.js';
import type { Capture, CaptureState } from '../capture/capture.js';
import { IDLE, withCue, withLine, type LiveCaptionsSnapshot, type LiveCaptionsStatus } from './snapshot.js';

export type { LiveCaptionsSnapshot, LiveCaptionsStatus };

/** What the credentials function is asked for. */
export interface CredentialsRequest {
  /**
   * `connect`: a start() needs a session: return the whole grant your backend made (`sessionId`,
   * `token`, `socketUrl`). `reconnect`: the socket of `sessionId` is being opened again: return a fresh
   * `token` for it (a grant for the same session works too).
   */
  readonly reason: 'connect' | 'reconnect';
  readonly sessionId?: string;
  /** Aborted when the store stops before the answer is needed. */
  readonly signal: AbortSignal;
}

/** The page's way to its backend: called for each start and before each reconnect of the socket. */
export type LiveCaptionsCredentials = (request: CredentialsRequest) => Promise<Partial<BrowserSessionGrant> & { readonly token: string }>;

export interface LiveCaptionsOptions {
  readonly credentials: LiveCaptionsCredentials;
  /**
   * Ends a session the store reserved but cannot finish over its socket (stopped before the socket
   * was up, or the socket refused): your backend finishes it with its key (`client.stt.realtime.finish`),
   * so it does not wait out its recovery window. Without it, a session reserved by a start() that was
   * stopped before its socket opened is attached and finished anyway.
   */
  readonly release?: (sessionId: string) => Promise<void>;
  /** startCapture's options (device, constraints, AudioContext, worklet URL, transport, recovery...). */
  readonly capture?: Omit<StartCaptureOptions, 'session' | 'stream' | 'releaseStream' | 'signal'>;
  /** The session's options (reconnect policy, timeouts, logger...). */
  readonly session?: Omit<RealtimeSocketOptions, 'credentials' | 'signal' | 'sampleRate' | 'channels'>;
  /** Caption cues (core's caption engine options), or false for none. Default: on, with the engine's defaults. */
  readonly captions?: AttachCaptionsOptions | false;
  /** Lines kept in the snapshot, oldest dropped first. Default 500. */
  readonly maxLines?: number;
  /** Cues kept in the snapshot. Default 100. */
  readonly maxCues?: number;
  /** mount() starts the store (and its last unmount stops it). Default false. */
  readonly autoStart?: boolean;
}

/** The states in which the session has a socket to finish over or is trying to get one. */
const SESSION_ENDED = new Set(['finished', 'closed', 'failed']);

/**
 * One start(): what it acquired, in order. Each await of the run re-checks `stopped`; whatever it holds
 * when stop() comes is released by #teardown, and an acquisition that completes after stop() is released
 * there too.
 */
interface Run {
  readonly id: number;
  readonly abort: AbortController;
  stopped: boolean;
  stream?: MediaStream;
  sessionId?: string;
  grant?: BrowserSessionGrant;
  session?: RealtimeSocketSession;
  capture?: Capture;
  readonly cleanups: Array<() => void>;
  /** Resolves when the run reached live or gave up (start()'s promise). */
  started?: Promise<void>;
  /** Resolves when everything it acquired was released and its session finished or released. */
  ended?: Promise<void>;
}

/**
 * A live-captions view as a store any framework can read: microphone → capture → realtime session →
 * lines, partial text and cues, with the capture's and the session's health. `subscribe` and
 * `getSnapshot` follow React's useSyncExternalStore contract (Vue and Svelte bindings use the same two).
 *
 * The store is the one owner of its run: start() acquires the microphone (first, so a visitor who says
 * no costs the service nothing), a session from `credentials`, the socket and the capture, in that
 * order; stop() at any point releases exactly what was acquired and finishes the session (or has the
 * backend `release` it). Only one run lives at a time: a start() after a stop() begins once the previous
 * run has released everything. Making a store acquires nothing, so it is safe during server-side
 * rendering and in a component's render.
 */
export class LiveCaptions {
  readonly #options: LiveCaptionsOptions;
  #snapshot: LiveCaptionsSnapshot = IDLE;
  readonly #listeners = new Set<() => void>();
  #run: Run | undefined;
  #runs = 0;
  /** The previous run's teardown: the next run starts after it. */
  #ending: Promise<void> = Promise.resolve();
  #holders = 0;
  #releaseTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: LiveCaptionsOptions) {
    if (typeof options?.credentials !== 'function') throw new WebAudioError('WEB_AUDIO_INVALID_OPTION', 'credentials is required: an async function that returns a session grant from your backend');
    for (const [name, value] of [['maxLines', options.maxLines], ['maxCues', options.maxCues]] as const) {
      if (value !== undefined && !(Number.isInteger(value) && value >= 1 && value <= 100_000)) throw new WebAudioError('WEB_AUDIO_INVALID_OPTION', `${name} must be an integer from 1 to 100000`);
    }
    this.#options = options;
  }

  /** The current snapshot (the same object until something changes). */
  getSnapshot = (): LiveCaptionsSnapshot => this.#snapshot;

  /** What a server render shows: always the idle snapshot. */
  getServerSnapshot = (): LiveCaptionsSnapshot => IDLE;

  /** Calls `listener` after each change; returns the unsubscribe. A listener that throws is reported, the others still run. */
  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  };

  /**
   * For a component's lifetime: returns its release. The first holder starts the store when
   * `autoStart` is set; when the last one releases and no holder comes back before the next task
   * (React StrictMode's unmount and mount again run in one task), the store stops. So a double mount
   * makes one run, one microphone and one server session.
   */
  mount(): () => void {
    this.#holders++;
    if (this.#releaseTimer !== undefined) clearTimeout(this.#releaseTimer);
    this.#releaseTimer = undefined;
    if (this.#holders === 1 && this.#options.autoStart === true && (this.#run === undefined || this.#run.stopped)) void this.start().catch(() => undefined);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holders--;
      if (this.#holders > 0) return;
      this.#releaseTimer = setTimeout(() => {
        this.#releaseTimer = undefined;
        if (this.#holders === 0) void this.stop();
      }, 0);
    };
  }

  /**
   * Starts a run, or returns the one under way. Resolves once captions flow (status `live`); rejects
   * with why it could not start (the snapshot says the same: `failed`, `error`), or with
   * WEB_AUDIO_STOPPED when stop() came first.
   */
  start(): Promise<void> {
    const current = this.#run;
    if (current !== undefined && !current.stopped) return current.started!;
    const run: Run = { id: ++this.#runs, abort: new AbortController(), stopped: false, cleanups: [] };
    this.#run = run;
    this.#set({ ...IDLE, status: 'starting', reason: 'waiting for the previous session to end' });
    const previous = this.#ending;
    run.started = previous.then(() => this.#go(run));
    run.started.catch(() => undefined);
    return run.started;
  }

  /** Stops the run: capture stopped, microphone released, session finished. Resolves when all that is done. */
  stop(): Promise<void> {
    const run = this.#run;
    if (run === undefined) return this.#ending;
    if (!run.stopped) {
      run.stopped = true;
      run.abort.abort(new WebAudioError('WEB_AUDIO_STOPPED', 'stopped'));
      const failed = this.#snapshot.status === 'failed';
      if (!failed) this.#set({ status: 'stopping', reason: 'stopping' });
      run.ended = this.#ending.then(() => this.#teardown(run)).then(() => {
        if (this.#run === run && !failed) this.#set({ status: 'stopped', reason: 'stopped', capture: null });
      });
      this.#ending = run.ended;
    }
    return run.ended!;
  }

  /** Pauses the session (the server commits the open segment); nothing is sent until resume(). */
  async pause(): Promise<void> {
    const capture = this.#live('pause');
    await capture.pause();
  }

  async resume(): Promise<void> {
    const capture = this.#live('resume');
    await capture.resume();
  }

  /** Keeps the session and sends nothing until unmute(). */
  mute(): void {
    this.#live('mute').mute();
    this.#set({ muted: true });
  }

  unmute(): void {
    this.#live('unmute').unmute();
    this.#set({ muted: false });
  }

  // ------------------------------------------------------------------------------------------------

  async #go(run: Run): Promise<void> {
    try {
      this.#step(run, 'asking for the microphone');
      const capture = this.#options.capture ?? {};
      run.stream = await openMicrophone({ deviceId: capture.deviceId, audio: capture.audio, mediaDevices: capture.mediaDevices });
      this.#step(run, 'reserving a session');
      const got = await this.#options.credentials({ reason: 'connect', signal: run.abort.signal });
      const grant = { sessionId: got?.sessionId ?? '', token: got?.token ?? '', socketUrl: got?.socketUrl ?? '' };
      run.grant = grant;
      run.sessionId = grant.sessionId;
      this.#step(run, 'connecting', { sessionId: grant.sessionId });
      const session = await attachSession(grant, {
        ...this.#options.session,
        credentials: async () => {
          const fresh = await this.#options.credentials({ reason: 'reconnect', sessionId: grant.sessionId, signal: run.abort.signal });
          return { token: fresh?.token };
        },
      });
      run.session = session;
      this.#watchSession(run, session);
      this.#step(run, 'starting the capture');
      const started = await startCapture({ ...capture, session, stream: run.stream, releaseStream: true });
      run.capture = started;
      this.#watchCapture(run, started);
      if (run.stopped) throw new WebAudioError('WEB_AUDIO_STOPPED', 'stopped');
      this.#set({ status: 'live', reason: 'listening' });
    } catch (caught) {
      if (run.stopped) throw new WebAudioError('WEB_AUDIO_STOPPED', 'stop() came before the captions started', { cause: caught });
      this.#fail(run, caught);
      throw caught;
    }
  }

  /** After each acquisition: go on, or stop here when stop() came meanwhile (the teardown releases what was acquired). */
  #step(run: Run, reason: string, patch: Partial<LiveCaptionsSnapshot> = {}): void {
    if (run.stopped) throw new WebAudioError('WEB_AUDIO_STOPPED', 'stopped');
    this.#set({ status: 'starting', reason, ...patch });
  }

  #watchSession(run: Run, session: RealtimeSocketSession): void {
    const mine = (): boolean => this.#run === run;
    const max = { lines: this.#options.maxLines ?? 500, cues: this.#options.maxCues ?? 100 };
    const onLine = (line: SessionLine): void => {
      if (mine()) this.#set({ lines: withLine(this.#snapshot.lines, line, max.lines), partial: '' });
    };
    const onUpdate = ({ line }: { line: SessionLine }): void => {
      if (mine()) this.#set({ lines: withLine(this.#snapshot.lines, line, max.lines) });
    };
    const onPartial = ({ text }: { text: string }): void => {
      if (mine()) this.#set({ partial: text });
    };
    const onHealth = (health: LiveCaptionsSnapshot['session']): void => {
      if (mine()) this.#set({ session: health });
    };
    const onState = (change: StateChange): void => {
      if (!mine() || run.stopped) return;
      if (change.to === 'reconnecting') this.#set({ status: 'reconnecting', reason: `reconnecting: ${change.reason}` });
      else if (change.to === 'paused') this.#set({ status: 'paused', paused: true, reason: 'paused' });
      else if ((change.to === 'streaming' || change.to === 'rotating') && run.capture !== undefined) this.#set({ status: 'live', paused: false, reason: 'listening' });
      else if (SESSION_ENDED.has(change.to)) this.#fail(run, new WebAudioError('WEB_AUDIO_SESSION_ENDED', `the session ended by itself: ${change.to} (${change.reason})`));
    };
    session.on('line', onLine);
    session.on('line.updated', onUpdate);
    session.on('partial', onPartial);
    session.on('health', onHealth);
    session.on('state', onState);
    run.cleanups.push(() => {
      session.off('line', onLine);
      session.off('line.updated', onUpdate);
      session.off('partial', onPartial);
      session.off('health', onHealth);
      session.off('state', onState);
    });
    const captions = this.#options.captions;
    if (captions !== false) {
      const attached = attachCaptions(session, captions ?? {});
      attached.on('cue', (change) => {
        if (mine()) this.#set({ cues: withCue(this.#snapshot.cues, change, max.cues) });
      });
      run.cleanups.push(() => attached.detach());
    }
  }

  #watchCapture(run: Run, capture: Capture): void {
    const mine = (): boolean => this.#run === run;
    const health = (h: CaptureHealth): void => {
      if (mine()) this.#set({ capture: h });
    };
    // A capture stops by itself only when it failed (the device did not come back, the session refused audio).
    const state = ({ to }: { to: CaptureState }): void => {
      if (!mine() || run.stopped) return;
      if (to === 'stopped' && capture.failure !== undefined) this.#fail(run, capture.failure);
      else if (to === 'muted' || to === 'capturing') this.#set({ muted: to === 'muted' });
    };
    capture.on('health', health).on('state', state);
    run.cleanups.push(() => void capture.off('health', health).off('state', state));
    // The values now, as the listeners would have told them.
    health(capture.health);
    state({ to: capture.state });
  }

  /** The run failed: say why, then release everything as stop() does. */
  #fail(run: Run, caught: unknown): void {
    if (this.#run !== run || run.stopped) return;
    const error = caught instanceof Error ? caught : new WebAudioError('WEB_AUDIO_CAPTURE_FAILED', String(caught));
    this.#set({ status: 'failed', reason: error.message, error });
    void this.stop();
  }

  /**
   * Releases what the run acquired, in reverse: the capture (its last audio reaches the session), the
   * microphone, then the session: finished over its socket; a session that failed or closed by itself,
   * or whose finish failed, released by the backend; one never attached, released by the backend or
   * else attached and finished. Waits for a start() still under way to reach a point where it holds
   * nothing unknown: every acquisition awaited in #go lands in `run` before #step throws.
   */
  async #teardown(run: Run): Promise<void> {
    await run.started?.catch(() => undefined);
    await run.capture?.stop().catch(() => undefined);
    for (const track of run.stream?.getTracks() ?? []) track.stop();
    const session = run.session;
    if (session !== undefined && !SESSION_ENDED.has(session.state)) {
      try {
        await session.finish();
      } catch {
        session.close();
        await this.#release(run.sessionId);
      }
    } else if (session !== undefined && session.state !== 'finished') {
      // Failed or closed by itself (the reconnect policy gave up, a refused token): the service still
      // holds it open until its recovery window passes unless the backend finishes it.
      await this.#release(run.sessionId);
    } else if (session === undefined && run.grant !== undefined) {
      await this.#release(run.sessionId, run.grant);
    }
    for (const cleanup of run.cleanups.splice(0)) cleanup();
  }

  /** A session the store could not finish over its socket: the backend releases it, or it is attached once to be finished. */
  async #release(sessionId: string | undefined, grant?: BrowserSessionGrant): Promise<void> {
    if (sessionId === undefined || sessionId === '') return;
    try {
      if (this.#options.release !== undefined) await this.#options.release(sessionId);
      else if (grant !== undefined) await (await attachSession(grant, this.#options.session)).finish();
    } catch {
      // Nothing more the page can do: the service ends it when its recovery window passes.
    }
  }

  #live(call: string): Capture {
    const capture = this.#run?.capture;
    if (capture === undefined || this.#run?.stopped !== false) throw new WebAudioError('WEB_AUDIO_STOPPED', `${call}() needs a running store: start() first`);
    return capture;
  }

  #set(patch: Partial<LiveCaptionsSnapshot>): void {
    this.#snapshot = Object.freeze({ ...this.#snapshot, ...patch });
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch (caught) {
        queueMicrotask(() => {
          throw caught;
        });
      }
    }
  }
}

/** A live-captions store (see LiveCaptions); framework bindings take one or make one from the same options. */
export function createLiveCaptions(options: LiveCaptionsOptions): LiveCaptions {
  return new LiveCaptions(options);
}
