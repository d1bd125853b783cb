import { randomBytes } from 'node:crypto';
import { SoundClone, type Billing, type SoundCloneOptions } from '@soundclone/core';
import { API_PREFIX, HEADERS } from '@soundclone/core/internal';
import { ChaosProxy, protocol, startServer, type AudioObserver, type Faults, type RunningServer, type ServerOptions } from '@soundclone/server';
import { startPageServer, type PageOptions, type TestPage } from './browser/page-server.js';
import { startRecording, type Recording } from './cassette/recorder.js';
import { EchoRecognizer } from './echo/echo-recognizer.js';
import { TestingError } from './errors.js';
import { FaultPlayer, type FaultRun } from './faults/player.js';
import type { FaultStep } from './faults/steps.js';
import { idempotencyConflicts, type IdempotencyConflict } from './idempotency-conflicts.js';
import { redact, type LoggedRequest, type LoggedSocketEvent } from './redact.js';
import { ScriptedRecognizer } from './speech/scripted-recognizer.js';
import type { SpeechScript } from './speech/script.js';
import { RealTestClock, VirtualClock, type TestClock } from './time/virtual-clock.js';
import { resolveTime, type TimeOption } from './time/options.js';
import { loopbackWebSocket } from './loopback-websocket.js';

export interface TestServerOptions {
  /**
   * What every realtime session hears (ScriptedRecognizer); change it for later sessions with
   * `setScript`. Default: an empty script (no lines).
   */
  readonly script?: SpeechScript;
  /**
   * `scripted` (default): lines come from the script. `deterministic`: the service's own recognizer,
   * which makes up words from the audio (tones become words; the same audio, the same words). `echo`:
   * the words spoken in audio from `echoAudio(script)` (EchoRecognizer), so what the SDK did to the
   * audio on its way shows.
   */
  readonly recognizer?: 'scripted' | 'deterministic' | 'echo';
  /** Seconds of audio kept per realtime session for `storedAudio` (default 600). */
  readonly retainAudioSeconds?: number;
  /** The service's time: 'real' (default), 'virtual' (moved by `server.clock.advance()`), 'audio' (also by received audio). */
  readonly time?: TimeOption;
  /**
   * Anything else for the service (ServerOptions of @soundclone/server): realtime timing, account
   * overrides, limits. The kit's own choices win: host, port, access keys, publicUrl (its proxy),
   * retained audio, and with the scripted recognizer the recognizer and the supplement policy. An
   * `onAudio` given here is told before the kit's fault runs.
   */
  readonly server?: Partial<ServerOptions>;
}

/** What a test reads about the charges of a realtime session or a batch task. */
export interface Charges extends Billing {
  readonly transcriptionId: string;
}

/** A realtime session: its id, or an object carrying it (an SDK session). */
export type SessionRef = string | { readonly sessionId: string };

export interface TestServer {
  /** Where clients and browsers reach the service: through the kit's proxy, which the network faults act on. */
  readonly url: string;
  /** The account's key (one account per server, made for it). */
  readonly accessKey: string;
  /** A SoundClone client for this server's account; `overrides` for the SDK's own options (timeouts, retries). */
  client(overrides?: Partial<SoundCloneOptions>): SoundClone;
  /** Sessions opened from now on hear this script. */
  setScript(script: SpeechScript): void;
  /**
   * Plays fault steps against a session (by id, or the first whose audio arrives after this call).
   * Stopped at close() if not before.
   */
  playFaults(steps: readonly FaultStep[], options?: { readonly session?: SessionRef }): FaultRun;
  /** The service's own fault injection: `http.inject({ path, action })` for REST, `socket` for the realtime socket. */
  readonly faults: { readonly http: Faults; readonly socket: Faults['socket']; readonly network: ChaosProxy };
  /** What the service charged for a realtime session or a transcription task (the task's billing). */
  charges(ref: SessionRef | { readonly transcriptionId: string }): Promise<Charges>;
  /** The PCM16 the service stored for a realtime session, as it received it (16 kHz mono). */
  storedAudio(session: SessionRef): Promise<Int16Array>;
  /** REST requests the service answered, oldest first (the last 1,000), with secrets redacted. */
  readonly requests: readonly LoggedRequest[];
  /**
   * Requests refused 409 IDEMPOTENCY_CONFLICT (an Idempotency-Key reused with another body), oldest
   * first, each with the request that first used the key.
   */
  idempotencyConflicts(): IdempotencyConflict[];
  /** Realtime socket events (connections, closes, faults), oldest first, with secrets redacted. */
  readonly sockets: readonly LoggedSocketEvent[];
  /**
   * Starts recording a cassette: point the app at the recording's `url` (in front of this server);
   * `recording.cassette()` is what the app and the service said, for `startReplayServer`. Closed with
   * the server.
   */
  record(): Promise<Recording>;
  /**
   * Serves a page for a browser test, cross-origin isolated, with a backend that mints sessions and
   * socket tokens for it with this server's key (browser/page-server.ts). Closed with the server.
   */
  page(options?: PageOptions): Promise<TestPage>;
  /** The service's clock: `now()`, and on virtual time `advance('1h')` (time/virtual-clock.ts). */
  readonly clock: TestClock;
  /** The running service itself, for what the kit does not cover. */
  readonly service: RunningServer;
  /** Stops the proxy, every fault run and the service; nothing of it is left open. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the reference service in this process, on 127.0.0.1 and a free port, with a proxy in front
 * for network faults. Each call is a world of its own: its own in-memory store, account and key.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const accessKey = `sk_test_${randomBytes(12).toString('hex')}`;
  const scripted = options.recognizer === 'deterministic' || options.recognizer === 'echo' ? undefined : new ScriptedRecognizer(options.script ?? []);
  if (options.recognizer !== undefined && options.recognizer !== 'scripted' && options.recognizer !== 'deterministic' && options.recognizer !== 'echo') {
    throw new TestingError('TESTING_INVALID_SCRIPT', `recognizer: 'scripted', 'deterministic' or 'echo' (got ${JSON.stringify(options.recognizer)})`);
  }
  const retainSeconds = options.retainAudioSeconds ?? 600;
  if (!(Number.isFinite(retainSeconds) && retainSeconds >= 0)) throw new TypeError(`retainAudioSeconds must be a number of seconds, at least 0 (got ${retainSeconds})`);
  const time = resolveTime(options.time);
  const clock = time.mode === 'real' ? undefined : new VirtualClock(time);
  // The proxy listens first so the service can hand out its address (socket URLs) from the start.
  const network = await new ChaosProxy(0).listen();
  // Fault runs come and go; the service is told of accepted audio once, through its onAudio option.
  const audioListeners = new Set<AudioObserver>();
  const onAudio: AudioObserver = (audio) => {
    options.server?.onAudio?.(audio);
    for (const listener of [...audioListeners]) listener(audio);
  };
  let service: RunningServer;
  try {
    service = await startServer({
      ttsHistorySeedCount: 0,
      coverSeedCount: 0,
      ...options.server,
      port: 0,
      host: '127.0.0.1',
      accessKeys: [accessKey],
      publicUrl: `http://127.0.0.1:${network.port}`,
      retainRealtimeAudioSamples: Math.round(retainSeconds * 16_000),
      onAudio,
      ...(clock !== undefined ? { clock } : {}),
      ...(scripted !== undefined
        ? { recognizer: scripted, supplementPolicy: (line, kind) => scripted.supplementDecision(line.source, kind) }
        : { recognizer: options.recognizer === 'echo' ? new EchoRecognizer() : 'deterministic' }),
    });
  } catch (error) {
    await network.close();
    throw error;
  }
  network.retarget(service.port);
  const url = `http://127.0.0.1:${network.port}`;
  if (clock?.mode === 'audio') audioListeners.add(({ receivedSamples }) => clock.heard(receivedSamples));
  const runs = new Set<FaultPlayer>();
  const recordings = new Set<Recording>();
  const pages = new Set<TestPage>();
  let closed: Promise<void> | undefined;
  const open = (what: string): void => {
    if (closed !== undefined) throw new TestingError('TESTING_CLOSED', `${what} after close()`);
  };
  const client = (overrides: Partial<SoundCloneOptions> = {}): SoundClone => {
    open('client()');
    return new SoundClone({ accessKey, baseUrl: url, retryDelay: { baseMs: 20, maxMs: 200 }, WebSocket: loopbackWebSocket, ...overrides });
  };
  // The kit's own lookups (charges, stored audio) go straight to the service and stay out of `requests`:
  // a test asserts on what its app sent.
  const ownRequests = new Set<string>();
  const ownFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const id = response.headers.get(HEADERS.requestId);
    if (id !== null) ownRequests.add(id);
    return response;
  };
  const own = new SoundClone({ accessKey, baseUrl: service.url, maxRetries: 0, fetch: ownFetch });
  const loggedRequests = (): LoggedRequest[] => redact(service.requests.filter((r) => !ownRequests.has(r.requestId)).map((r) => ({ ...r })), [accessKey]);
  const idOf = (ref: SessionRef): string => (typeof ref === 'string' ? ref : ref.sessionId);

  return {
    url,
    accessKey,
    client,
    setScript(script) {
      open('setScript()');
      if (scripted === undefined) throw new TestingError('TESTING_INVALID_SCRIPT', `setScript(): this server hears the audio, not a script (started with recognizer: '${options.recognizer}')`);
      scripted.setScript(script);
    },
    playFaults(steps, playOptions = {}) {
      open('playFaults()');
      const run = new FaultPlayer(steps, { faults: service.faults, proxy: network, onAudio: (listener) => {
        const observer: AudioObserver = (audio) => listener(audio.sessionId, audio.receivedSamples);
        audioListeners.add(observer);
        return () => audioListeners.delete(observer);
      } }, playOptions.session === undefined ? undefined : idOf(playOptions.session));
      runs.add(run);
      return run;
    },
    faults: { http: service.faults, socket: service.faults.socket, network },
    async charges(ref) {
      open('charges()');
      let transcriptionId: string;
      if (typeof ref === 'object' && 'transcriptionId' in ref) transcriptionId = ref.transcriptionId;
      else if (typeof ref === 'string' && ref.startsWith(protocol.ID_PREFIXES.transcription)) transcriptionId = ref;
      else transcriptionId = (await known(() => own.stt.realtime.get(idOf(ref as SessionRef)), 'realtime session', idOf(ref as SessionRef))).transcriptionId;
      const task = await known(() => own.stt.transcriptions.get(transcriptionId), 'transcription', transcriptionId);
      return { transcriptionId, ...task.billing };
    },
    async storedAudio(session) {
      open('storedAudio()');
      const id = idOf(session);
      const response = await ownFetch(`${service.url}${API_PREFIX}/stt/realtime/sessions/${encodeURIComponent(id)}/audio`, { headers: { accessKey } });
      if (response.status === 404) throw new TestingError('TESTING_NOT_FOUND', `storedAudio(): no realtime session ${id} on this server`);
      if (response.status !== 200) throw new TestingError('TESTING_NOT_FOUND', `storedAudio(): the service answered ${response.status} for session ${id}`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2).slice();
    },
    get requests() {
      return loggedRequests();
    },
    idempotencyConflicts() {
      return idempotencyConflicts(loggedRequests());
    },
    get sockets() {
      return redact(service.sockets.log.map((e) => ({ ...e })), [accessKey]);
    },
    async record() {
      open('record()');
      const recording = await startRecording(url, [accessKey]);
      recordings.add(recording);
      return recording;
    },
    async page(pageOptions) {
      open('page()');
      const page = await startPageServer(client(), pageOptions);
      pages.add(page);
      return page;
    },
    clock: clock ?? new RealTestClock(),
    service,
    close() {
      closed ??= (async () => {
        clock?.stop();
        for (const run of runs) run.stop();
        runs.clear();
        for (const recording of recordings) await recording.close();
        for (const page of pages) await page.close();
        await network.close();
        await service.close();
      })();
      return closed;
    },
  };
}

/** Runs a lookup; a 404 becomes TestingError TESTING_NOT_FOUND. */
async function known<T>(lookup: () => Promise<T>, what: string, id: string): Promise<T> {
  try {
    return await lookup();
  } catch (error) {
    if ((error as { status?: number }).status === 404) throw new TestingError('TESTING_NOT_FOUND', `no ${what} ${id} on this server`, { cause: error });
    throw error;
  }
}
