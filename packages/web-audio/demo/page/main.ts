import { attachSession, isWebAudioError, openMicrophone, startCapture, type Capture, type CaptureDrop, type CaptureResult, type WebCaptureEvent } from '@soundclone/web-audio';
import { ApiError, isSoundCloneError, type CaptureHealth, type RealtimeFinishResult, type RealtimeSocketSession, type SessionHealth } from '@soundclone/core';
import { apiErrorFromResponse, protocol } from '@soundclone/core/internal';
import { sessionStreams } from '@soundclone/core/rx';
import { captionCues, captureStreams } from '@soundclone/web-audio/rx';
import { CaptionsView } from './captions-view.js';
import { CueTrack } from './cue-track.js';

/**
 * The live-captions demo page: Start asks for the microphone, then asks the backend (the dev server)
 * for a session and its short-lived token, attaches to it, and captures the microphone into it. A
 * Start that fails after the session was reserved releases it at once, so a failed attempt never
 * holds one of the service's recognizer slots. No framework: a few subscriptions write into the DOM.
 */
export interface DemoStartOptions {
  /** Capture transport; default 'auto' (shared memory when the page is cross-origin isolated). */
  readonly transport?: 'auto' | 'shared' | 'transfer';
  /** Create the AudioContext at this rate (default: the device's). */
  readonly sampleRate?: number;
  /** Load the worklet from the served file (default) or from a Blob URL of its source. */
  readonly worklet?: 'url' | 'blob';
  /** Or from this URL (tests: a missing one). */
  readonly workletUrl?: string;
  /** A microphone by id instead of the default one. */
  readonly deviceId?: string;
  /** Keep a copy of every block handed to the session (tests compare it with what the server stored). */
  readonly keepInput?: boolean;
  /** How long the page may stall before audio is lost: shared ring / transfer pool, ms (default 2000). */
  readonly ringMs?: number;
  readonly poolMs?: number;
  /** Device recovery attempts (default: the capture's, 8). */
  readonly recoveryAttempts?: number;
  /** The worklet's voice gate (default: the page's Gate toggle). */
  readonly gate?: boolean;
}

export interface DemoSnapshot {
  readonly sessionId: string | undefined;
  readonly isolated: boolean;
  readonly connection: string;
  readonly captureState: string;
  readonly epoch: number;
  readonly reconnects: number;
  /** The current session's lines (earlier sessions stay on the page, under their own heading). */
  readonly lines: string[];
  /** Sessions shown on the page, one heading each. */
  readonly sessions: number;
  /** What the page told the visitor last (a failed Start), in plain words; '' when nothing. */
  readonly message: string;
  readonly entities: Array<{ text: string; category: string }>;
  readonly partial: string;
  readonly level: number;
  readonly stats: Capture['stats'] | undefined;
  /** Audio the capture lost before the page (a stalled page), as drops$ reported it. */
  readonly drops: CaptureDrop[];
  /** The capture's health as the page last showed it, and every capture event so far (errors as their code). */
  readonly health: CaptureHealth | undefined;
  readonly events: Array<WebCaptureEvent | { type: 'failed'; code: string; atMs: number }>;
  /** The health line the visitor sees. */
  readonly healthText: string;
  /** The voice gate as the page shows it: the toggle, speech or silence, "saved N %", and the session's speech events. */
  readonly gate: { readonly on: boolean; readonly activity: string; readonly saved: string; readonly speech: Array<{ event: string; sample: number }> };
}

export interface DemoStopResult {
  readonly capture: CaptureResult;
  readonly finish: { status: string; receivedSamples: string; capturedSamples: string; notices: string[]; lines: string[] };
  readonly sessionStats: RealtimeSocketSession['stats'];
  /** keepInput: the session writer's input, Float32 little-endian, base64. */
  readonly input?: string;
  /** keepInput: where in `input` each segment ended (mute, pause, a drop or a gap), in frames. */
  readonly segments: number[];
  /** The capture's rate in each segment (segments.length + 1 of them): a new device may run at another. */
  readonly rates: number[];
  /** The capture stopped by itself with this code (WEB_AUDIO_DEVICE_LOST) and the session was finished anyway. */
  readonly failure?: string;
  /** After stop: every track of the captured stream ended; the AudioContext's state. */
  readonly tracksEnded: boolean;
  readonly contextState: string;
}

export interface DemoApi {
  start(options?: DemoStartOptions): Promise<{ transport: string; sampleRate: number; kernel: string; isolated: boolean }>;
  stop(): Promise<DemoStopResult>;
  mute(): void;
  unmute(): void;
  pause(): Promise<void>;
  resume(): Promise<void>;
  snapshot(): DemoSnapshot;
  /** The running capture, for tests that act on its device, track or context. */
  current(): Capture | undefined;
}

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const view = new CaptionsView(document);
const cueTrack = new CueTrack(document);
const buttons = { start: $<HTMLButtonElement>('start'), mute: $<HTMLButtonElement>('mute'), pause: $<HTMLButtonElement>('pause'), stop: $<HTMLButtonElement>('stop') };
const connection = $('connection');
const reconnectsEl = $('reconnects');
const levelEl = $('level');
const details = $('details');
const messageEl = $('message');
const gateToggle = $<HTMLInputElement>('gate');
const speechEl = $('speech');
const savedEl = $('saved');

let session: RealtimeSocketSession | undefined;
let capture: Capture | undefined;
let reconnects = 0;
let levelDb = Number.NEGATIVE_INFINITY;
let kept: Float32Array[] = [];
let keptFrames = 0;
let segments: number[] = [];
let drops: CaptureDrop[] = [];
let rates: number[] = [];
let events: DemoSnapshot['events'] = [];
let health: CaptureHealth | undefined;
let levelFrame = 0;
let starting = false;
let sessionCount = 0;
let stopping = false;
let gated = false;
let speech: Array<{ event: string; sample: number }> = [];

async function start(options: DemoStartOptions = {}): Promise<{ transport: string; sampleRate: number; kernel: string; isolated: boolean }> {
  if (capture !== undefined || starting || stopping) throw new Error('already started');
  starting = true;
  buttons.start.disabled = true;
  say('');
  reconnects = 0;
  kept = [];
  keptFrames = 0;
  segments = [];
  drops = [];
  events = [];
  health = undefined;
  speech = [];
  gated = options.gate ?? gateToggle.checked;
  gateToggle.checked = gated;
  gateToggle.disabled = true; // chosen at Start: from the click on, not once the capture runs
  showActivity(gated ? 'silence' : 'off');
  savedEl.textContent = '';
  resetLevel();
  let context: AudioContext | undefined;
  let stream: MediaStream | undefined;
  let reserved: string | undefined;
  try {
    // The microphone first: a visitor who says no (or has none) never reserves anything on the service.
    stream = await openMicrophone(options.deviceId !== undefined ? { deviceId: options.deviceId } : {});
    // The backend creates the session with its key; the page only ever sees the token.
    const grant = await reserveSession();
    reserved = grant.sessionId;
    session = await attachSession(grant);
    watchSession(session);
    if (options.sampleRate !== undefined) context = new AudioContext({ sampleRate: options.sampleRate });
    const workletUrl = options.workletUrl ?? (options.worklet === 'blob' ? await blobWorkletUrl() : '/capture-worklet.js');
    capture = await startCapture({
      session, stream, releaseStream: true, transport: options.transport ?? 'auto', workletUrl,
      ...(context !== undefined ? { context } : {}),
      ...(options.keepInput === true ? { onSamples: keep } : {}),
      ...(options.ringMs !== undefined ? { ringMs: options.ringMs } : {}),
      ...(options.poolMs !== undefined ? { poolMs: options.poolMs } : {}),
      ...(options.recoveryAttempts !== undefined ? { recovery: { attempts: options.recoveryAttempts } } : {}),
      ...(gated ? { gate: true } : {}),
    });
    rates = [capture.sampleRate];
    // A new heading for this session (its first line is a server round trip away): earlier sessions'
    // lines stay above it.
    view.beginSession(`Session ${++sessionCount} · ${new Date().toLocaleTimeString()}`);
    watchCapture(capture);
    setButtons(true);
    return { transport: capture.transport, sampleRate: capture.sampleRate, kernel: capture.stats.kernel, isolated: crossOriginIsolated };
  } catch (caught) {
    // startCapture released what it made; the stream and the context are ours (it never stops or
    // closes what an app passed in when it fails).
    stream?.getTracks().forEach((t) => t.stop());
    if (context !== undefined && context.state !== 'closed') await context.close().catch(() => undefined);
    session?.close();
    session = undefined;
    // Reserved but not started: finish it now, or its recognizer slot stays taken for the service's
    // recovery window (a minute) and a few failed Starts lock every visitor out.
    if (reserved !== undefined) await releaseSession(reserved);
    buttons.start.disabled = false;
    gateToggle.disabled = false;
    say(plainWords(caught));
    details.textContent = `Could not start: ${caught instanceof Error ? caught.message : String(caught)}`;
    throw caught;
  } finally {
    starting = false;
  }
}

/** POST /api/session; a refusal becomes core's ApiError from the service's own envelope (the dev server passes it through). */
async function reserveSession(): Promise<{ sessionId: string; token: string; socketUrl: string }> {
  const response = await fetch('/api/session', { method: 'POST' });
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) throw apiErrorFromResponse({ status: response.status, body, headers: response.headers, requestIdHeader: 'X-Request-Id' });
  return body as { sessionId: string; token: string; socketUrl: string };
}

/** Asks the backend to finish a session the page will not use; best effort (the service's recovery window is the backstop). */
async function releaseSession(sessionId: string, keepalive = false): Promise<void> {
  await fetch(`/api/session/${encodeURIComponent(sessionId)}/release`, { method: 'POST', keepalive }).catch(() => undefined);
}

/** What went wrong, for the visitor: no status codes, and what to do next. */
function plainWords(caught: unknown): string {
  if (isSoundCloneError(caught, ApiError) && caught.code === 'INSUFFICIENT_CHARACTERS') return BALANCE_ADVICE_START;
  if (isSoundCloneError(caught, ApiError) && caught.code === 'RATE_LIMITED' && (protocol.ACCOUNT_LIMIT_REASONS as readonly unknown[]).includes(caught.details?.['reason'])) {
    // Per-account limits (docs/protocol.md "Per-account limits"): this account, not the service, is full.
    return 'This account already has as many captions running as it may at once. Stop captions in another tab or window, then press Start again.';
  }
  if (isSoundCloneError(caught, ApiError) && (caught.code === 'SERVICE_UNAVAILABLE' || caught.code === 'RATE_LIMITED')) return 'The speech service is busy, try again in a moment.';
  if (isSoundCloneError(caught, ApiError)) return `The speech service could not start captions (${caught.message}). Try again in a moment.`;
  if (isWebAudioError(caught)) {
    switch (caught.code) {
      case 'WEB_AUDIO_PERMISSION_DENIED':
        return 'The browser did not allow the microphone. Allow it for this page (the icon in the address bar), then press Start again.';
      case 'WEB_AUDIO_DEVICE_NOT_FOUND':
        return 'No microphone was found. Connect one, then press Start again.';
      default:
        return `The microphone could not be started (${caught.message}).`;
    }
  }
  return `Captions could not start (${caught instanceof Error ? caught.message : String(caught)}).`;
}

const BALANCE_ADVICE_START = 'The account has no characters left for captions. Add characters to the account (a bigger plan or a character order), then press Start again.';

/** The service stopped the session because the account's characters ran out: plain words, and stop. */
function balanceUsedUp(s: RealtimeSocketSession, receivedSamples: number): void {
  const seconds = (receivedSamples / 16000).toFixed(1);
  say(`The account's characters ran out after ${seconds} s of audio, so captions stopped. Add characters to the account (a bigger plan or a character order), then press Start again.`);
  details.textContent = `Stopped: balance used up after ${seconds} s of audio`;
  // The session takes no more audio: stop the microphone now (stop() ends in the session's typed error).
  if (session === s && capture !== undefined && !stopping) void stop().catch(() => undefined);
}

function say(text: string): void {
  messageEl.textContent = text;
  messageEl.hidden = text === '';
}

function keep(block: Float32Array): void {
  kept.push(block.slice());
  keptFrames += block.length;
}

async function stop(): Promise<DemoStopResult> {
  if (capture === undefined || session === undefined || stopping) throw new Error('not started');
  stopping = true;
  setButtons(false);
  const c = capture;
  const s = session;
  const { context, stream } = c;
  try {
    let result: CaptureResult;
    let failure: string | undefined;
    try {
      result = await c.stop();
    } catch (caught) {
      // No microphone came back: what was captured before the loss is in the session, exactly; finish it.
      if (!isWebAudioError(caught) || caught.code !== 'WEB_AUDIO_DEVICE_LOST' || c.result === undefined) throw caught;
      failure = caught.code;
      result = c.result;
    } finally {
      capture = undefined;
      // Stopped means silent: the meter goes to zero, not frozen at the last level.
      resetLevel();
    }
    // startCapture closed the context it made and stopped the tracks (releaseStream); ours we close here.
    const tracksEnded = stream.getTracks().every((t) => t.readyState === 'ended');
    const contextState = context.state;
    if (context.state !== 'closed') await context.close();
    const finished: RealtimeFinishResult = await s.finish();
    const input = kept.length > 0 ? base64(concat(kept)) : undefined;
    const out: DemoStopResult = {
      capture: result,
      finish: {
        status: finished.session.status,
        receivedSamples: String(finished.session.usage.receivedSamples),
        capturedSamples: String(finished.session.usage.capturedSamples),
        notices: finished.notices.map((n) => n.code),
        lines: finished.lines.map((l) => l.text),
      },
      sessionStats: s.stats,
      ...(input !== undefined ? { input } : {}),
      segments,
      rates,
      ...(failure !== undefined ? { failure } : {}),
      tracksEnded,
      contextState,
    };
    if (gated) savedEl.textContent = `saved ${Math.round(s.health.savedShare * 100)} %`;
    details.textContent = `Finished: ${finished.session.status} · ${finished.lines.length} lines · ${(Number(out.finish.receivedSamples) / 16000).toFixed(1)} s of audio`;
    return out;
  } finally {
    stopping = false;
    buttons.start.disabled = false;
  }
}

function watchSession(s: RealtimeSocketSession): void {
  const streams = sessionStreams(s);
  streams.state$.subscribe((state) => {
    connection.textContent = state;
    connection.dataset['state'] = state;
  });
  s.on('reconnected', () => {
    reconnects += 1;
    reconnectsEl.textContent = `${reconnects} reconnect${reconnects === 1 ? '' : 's'}`;
  });
  s.on('health', showConnection);
  // The voice gate (the worklet's): speech or silence, and the share of the audio not sent.
  s.on('speech.start', (edge) => {
    speech.push({ event: 'speech.start', sample: edge.sample });
    showActivity('speech');
  });
  s.on('speech.end', (edge) => {
    speech.push({ event: 'speech.end', sample: edge.sample });
    showActivity('silence');
  });
  s.on('health', (h) => {
    if (gated) savedEl.textContent = `saved ${Math.round(h.savedShare * 100)} %`;
  });
  s.on('balance.exhausted', (info) => balanceUsedUp(s, info.receivedSamples));
  streams.partials$.subscribe((p) => view.partial(p.text));
  streams.lines$.subscribe((line) => view.line(line));
  streams.lineUpdates$.subscribe((update) => view.line(update.line));
  // The live cues: attached with the session, so the engine sees every partial and line it emits.
  cueTrack.beginSession(`Session ${sessionCount + 1}`);
  captionCues(s).subscribe((change) => cueTrack.apply(change));
}

function watchCapture(c: Capture): void {
  const streams = captureStreams(c);
  streams.level$.subscribe((level) => {
    if (capture !== c) return; // a level queued before stop() must not light the meter again
    levelDb = level.dbfs;
    // One style write per frame, however often levels arrive.
    if (levelFrame === 0) levelFrame = requestAnimationFrame(drawLevel);
  });
  streams.events$.subscribe((event) => {
    events.push(event.type === 'failed' ? { type: 'failed', code: (event.error as { code?: string }).code ?? event.error.name, atMs: event.atMs } : event);
    // A gap closes at the new device's first frame, before that frame is kept: the cut is here.
    // No device, no level: the meter rests until audio comes again.
    if (event.type === 'device-lost') resetLevel();
    if (event.type === 'failed' && (event.error as { code?: string }).code === 'WEB_AUDIO_DEVICE_LOST') say('The microphone was lost and none came back. Plug one in, press Stop, then Start again; the captions so far are kept.');
    if (event.type === 'gap') {
      segments.push(keptFrames);
      rates.push(c.sampleRate);
    }
  });
  streams.health$.subscribe((h) => {
    health = h;
    showHealth(h);
  });
  streams.drops$.subscribe((drop) => {
    // The session's segment ends at a drop too: the audio on each side is resampled on its own.
    segments.push(keptFrames);
    rates.push(c.sampleRate);
    drops.push(drop);
    const total = drops.reduce((n, d) => n + d.to - d.from, 0);
    $('drops').textContent = `${((total / c.sampleRate) * 1000).toFixed(0)} ms of audio lost (the page stalled)`;
  });
  streams.state$.subscribe((state) => {
    levelEl.parentElement?.classList.toggle('muted', state === 'muted' || state === 'paused');
    buttons.mute.setAttribute('aria-pressed', String(state === 'muted'));
    buttons.mute.textContent = state === 'muted' ? 'Unmute' : 'Mute';
    buttons.pause.textContent = state === 'paused' ? 'Resume' : 'Pause';
  });
  const tick = setInterval(() => {
    if (capture !== c) return clearInterval(tick);
    const st = c.stats;
    details.textContent = `${st.transport === 'shared' ? 'SharedArrayBuffer ring' : 'transferred batches'} · ${st.sampleRate} Hz → 16 kHz (${st.kernel}) · ${(st.sentSamples / 16000).toFixed(1)} s sent`;
  }, 250);
}

/**
 * Connection quality from the session's health stream: latency and round trip while healthy, the audio
 * waiting while degraded ("degraded — 2.0 s of audio buffered"), the cause and length of the last reconnect.
 */
function showConnection(h: SessionHealth): void {
  const el = $('quality');
  const parts: string[] = [];
  if (h.state === 'degraded') parts.push(`degraded — ${(h.bufferedMs / 1000).toFixed(1)} s of audio buffered`);
  else {
    if (h.finalLatencyMs.p50 !== null) parts.push(`latency ${h.finalLatencyMs.p50} ms`);
    if (h.rttMs.last !== null) parts.push(`rtt ${h.rttMs.last} ms`);
  }
  const last = h.lastReconnect;
  if (last !== null) parts.push(last.durationMs === null ? `reconnecting: ${last.cause}` : `last reconnect: ${last.cause} (${(last.durationMs / 1000).toFixed(1)} s)`);
  el.textContent = parts.join(' · ');
  el.dataset['state'] = h.state;
}

function showActivity(state: 'speech' | 'silence' | 'off'): void {
  speechEl.hidden = state === 'off';
  speechEl.textContent = state;
  speechEl.dataset['state'] = state;
}

/** The status line: the device, and what is wrong when something is ("no audio for 3 s", "device lost — reconnecting to default"). */
function showHealth(h: CaptureHealth): void {
  const el = $('health');
  const device = h.device === null ? '' : `${h.device.label || 'microphone'} · ${(h.device.sampleRate / 1000).toFixed(1)} kHz`;
  let problem = '';
  if (h.state === 'recovering') problem = /default/.test(h.reason) ? 'device lost — reconnecting to default' : h.reason.startsWith('suspended') ? 'audio suspended — resuming' : 'device lost — reconnecting';
  else if (h.state === 'failed') problem = 'device lost — no microphone came back';
  else if (h.state === 'running' && h.silentForMs >= 2000) problem = `no audio for ${Math.floor(h.silentForMs / 1000)} s`;
  el.textContent = [device, problem].filter((t) => t !== '').join(' · ');
  el.dataset['state'] = problem === '' ? h.state : 'problem';
}

function resetLevel(): void {
  levelDb = Number.NEGATIVE_INFINITY;
  if (levelFrame !== 0) cancelAnimationFrame(levelFrame);
  levelFrame = 0;
  levelEl.style.width = '0%';
}

function drawLevel(): void {
  levelFrame = 0;
  const pct = Number.isFinite(levelDb) ? Math.min(100, Math.max(0, ((levelDb + 60) / 60) * 100)) : 0;
  levelEl.style.width = `${pct.toFixed(1)}%`;
}

function setButtons(running: boolean): void {
  buttons.start.disabled = running;
  buttons.mute.disabled = !running;
  buttons.pause.disabled = !running;
  buttons.stop.disabled = !running;
  gateToggle.disabled = running; // the gate is chosen at Start
}

async function blobWorkletUrl(): Promise<string> {
  // The package's `worklet-source` artifact, served here as a module: its text becomes a Blob URL.
  const { default: source } = (await import('/capture-worklet-source.js' as string)) as { default: string };
  return URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
}

function concat(blocks: Float32Array[]): Float32Array {
  const out = new Float32Array(blocks.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of blocks) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

function base64(samples: Float32Array): string {
  const bytes = new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

// A tab closed mid-capture: finish its session now rather than after the recovery window (best effort).
addEventListener('pagehide', () => {
  if (session !== undefined && capture !== undefined) void releaseSession(session.sessionId, true);
});

buttons.start.addEventListener('click', () => void start().catch(() => undefined));
buttons.stop.addEventListener('click', () => void stop().catch(() => undefined));
// The session's segment ends at mute and pause (the resampler tail is flushed): tests replay that.
function mute(): void {
  if (capture === undefined || capture.muted) return;
  segments.push(keptFrames);
  rates.push(capture.sampleRate);
  capture.mute();
}
function unmute(): void {
  capture?.unmute();
}
async function pause(): Promise<void> {
  if (capture === undefined || capture.paused) return;
  segments.push(keptFrames);
  rates.push(capture.sampleRate);
  await capture.pause();
}
async function resume(): Promise<void> {
  await capture?.resume();
}

buttons.mute.addEventListener('click', () => (capture?.muted ? unmute() : mute()));
buttons.pause.addEventListener('click', () => void (capture?.paused ? resume() : pause()).catch(() => undefined));

const api: DemoApi = {
  start,
  stop,
  mute,
  unmute,
  pause,
  resume,
  snapshot: () => ({
    sessionId: session?.sessionId,
    isolated: crossOriginIsolated,
    connection: connection.textContent ?? '',
    captureState: capture?.state ?? 'stopped',
    epoch: session?.epoch ?? 0,
    reconnects,
    lines: Array.from(document.querySelectorAll('#lines .session:last-child .line')).map((p) => Array.from(p.childNodes).filter((n) => !(n instanceof HTMLElement && n.classList.contains('time'))).map((n) => n.textContent).join('')),
    entities: Array.from(document.querySelectorAll<HTMLElement>('#lines mark.entity')).map((m) => ({ text: m.textContent ?? '', category: m.dataset['category'] ?? '' })),
    sessions: document.querySelectorAll('#lines .session').length,
    message: messageEl.hidden ? '' : messageEl.textContent ?? '',
    partial: $('partial').textContent ?? '',
    level: Number.isFinite(levelDb) ? levelDb : -Infinity,
    stats: capture?.stats,
    drops: drops.slice(),
    health: capture?.health ?? health,
    events: events.slice(),
    healthText: $('health').textContent ?? '',
    gate: { on: gated, activity: speechEl.hidden ? '' : speechEl.textContent ?? '', saved: savedEl.textContent ?? '', speech: speech.slice() },
  }),
  current: () => capture,
};
(window as unknown as { demo: DemoApi }).demo = api;
