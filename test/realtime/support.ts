import { startServer, type RunningServer, type ServerOptions } from '@soundclone/server';
import { SoundClone, type RealtimeSessionEvents, type RealtimeSocketSession, type ServerMessage } from '@soundclone/core';

/**
 * End-to-end helpers for the realtime session: the reference server on 127.0.0.1:0 with its
 * test-only stored-audio read, speech-like PCM made in code, and an event capture to wait on.
 */
export const KEY = 'key-realtime';
export const PREFIX = '/sound_clone/api/v1';

export async function startRealtimeServer(options: Partial<ServerOptions> = {}): Promise<RunningServer> {
  return startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY], retainRealtimeAudioSamples: 16_000 * 600, ...options });
}

export function clientFor(server: { url: string }): SoundClone {
  return new SoundClone({ accessKey: KEY, baseUrl: server.url, retryDelay: { baseMs: 20, maxMs: 100 } });
}

/**
 * Tone bursts (words) and silences (line breaks) the reference recogniser turns into lines. `silenceMs`
 * after each line (600 by default); a longer one makes speech with silence for a voice gate.
 */
export function speech(lines: number, seed = 1, silenceMs = 600): Int16Array {
  const rate = 16_000;
  const parts: Array<{ tone?: number; ms: number }> = [{ ms: 100 }];
  for (let i = 0; i < lines; i++) {
    const base = 200 + ((i * 37 + seed * 101) % 700);
    parts.push({ tone: base, ms: 200 + ((i * 53) % 200) }, { ms: 100 }, { tone: base + 150, ms: 240 }, { ms: silenceMs });
  }
  const total = parts.reduce((n, p) => n + Math.round((p.ms * rate) / 1000), 0);
  const out = new Int16Array(total);
  let at = 0;
  for (const p of parts) {
    const n = Math.round((p.ms * rate) / 1000);
    // A little seeded noise on top, so every sample value matters for the bit-exact comparison.
    for (let i = 0; i < n; i++, at++) {
      const noise = ((Math.imul(at + seed * 7919, 2654435761) >>> 16) % 64) - 32;
      out[at] = p.tone === undefined ? noise : Math.round(0.5 * 32767 * Math.sin((2 * Math.PI * p.tone * i) / rate)) + noise;
    }
  }
  return out;
}

/** Test-only server read of the PCM16 it stored for a session. */
export async function storedAudio(server: RunningServer, sessionId: string): Promise<Int16Array> {
  const r = await fetch(`${server.url}${PREFIX}/stt/realtime/sessions/${sessionId}/audio`, { headers: { accessKey: KEY } });
  if (r.status !== 200) throw new Error(`stored audio: HTTP ${r.status}`);
  const bytes = new Uint8Array(await r.arrayBuffer());
  return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2).slice();
}

/** Writes PCM in 20 ms blocks, yielding to the event loop every `every` blocks (faster than real time). */
export async function feed(session: RealtimeSocketSession, pcm: Int16Array, from = 0, to = pcm.length, every = 25): Promise<void> {
  let blocks = 0;
  for (let at = from; at < to; at += 320) {
    session.writePcm16(pcm.subarray(at, Math.min(to, at + 320)));
    if (++blocks % every === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

type EventName = keyof RealtimeSessionEvents;
type Payload<K extends EventName> = Parameters<RealtimeSessionEvents[K]>[0];

/** Records every event of a session; `waitFor` looks at the past too (no race with fast servers). */
export class EventCapture {
  readonly events: Array<{ name: EventName; payload: unknown }> = [];
  private wakers = new Set<() => void>();
  private readonly names: EventName[];

  constructor(private readonly session: RealtimeSocketSession, names: EventName[] = ['state', 'line', 'line.updated', 'partial', 'gap', 'first.frame', 'reconnecting', 'reconnected', 'rotated', 'recovery.expired', 'notice', 'usage', 'message', 'debug']) {
    this.names = names;
    for (const name of names) session.on(name, this.listener(name) as never);
  }

  private listeners = new Map<EventName, (payload: unknown) => void>();

  private listener(name: EventName): (payload: unknown) => void {
    const fn = (payload: unknown): void => {
      this.events.push({ name, payload });
      for (const wake of [...this.wakers]) wake();
    };
    this.listeners.set(name, fn);
    return fn;
  }

  all<K extends EventName>(name: K): Array<Payload<K>> {
    return this.events.filter((e) => e.name === name).map((e) => e.payload as Payload<K>);
  }

  waitFor<K extends EventName>(name: K, predicate: (payload: Payload<K>) => boolean = () => true, timeoutMs = 10_000): Promise<Payload<K>> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.all(name).find(predicate);
        if (found === undefined) return false;
        cleanup();
        resolve(found);
        return true;
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        this.wakers.delete(wake);
      };
      const wake = (): void => void check();
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${String(name)}; saw ${this.events.map((e) => String(e.name)).join(', ')}`));
      }, timeoutMs);
      this.wakers.add(wake);
      check();
    });
  }

  /** A raw server message of this type (the `message` event), past or future. */
  waitForMessage<T extends ServerMessage['type']>(type: T, predicate: (message: Extract<ServerMessage, { type: T }>) => boolean = () => true, timeoutMs = 10_000): Promise<Extract<ServerMessage, { type: T }>> {
    return this.waitFor('message', (m) => m.type === type && predicate(m as Extract<ServerMessage, { type: T }>), timeoutMs) as Promise<Extract<ServerMessage, { type: T }>>;
  }

  states(): string[] {
    return this.all('state').map((c) => c.to);
  }

  dispose(): void {
    for (const [name, fn] of this.listeners) this.session.off(name, fn as never);
    this.listeners.clear();
  }
}

/** Where `pcm` is speech (the tone bursts of speech()): runs of samples louder than its noise, as [from, to). */
export function bursts(pcm: Int16Array): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let start = -1;
  let quiet = 0;
  for (let i = 0; i < pcm.length; i++) {
    if (Math.abs(pcm[i]!) > 200) {
      if (start < 0) start = i;
      quiet = 0;
    } else if (start >= 0 && ++quiet > 160) {
      out.push([start, i - quiet + 1]);
      start = -1;
    }
  }
  if (start >= 0) out.push([start, pcm.length]);
  return out;
}

/**
 * The stored audio of a session with a voice gate against what was captured: every sample must be the
 * captured one, or zero where the gate skipped time, and no zeroed sample within `marginMs` of speech,
 * except right after a pause (`pausedAt`: captured positions): the gate starts afresh there, its
 * hangover of the speech before the pause is not carried over the cut (the server committed the line).
 * `zeroed`: samples zero where the capture was not; `wrong`: any other difference (or a length that differs).
 */
export function compareGatedStore(stored: Int16Array, pcm: Int16Array, marginMs: number, pausedAt: readonly number[] = []): { zeroed: number; wrong: number } {
  if (stored.length !== pcm.length) return { zeroed: 0, wrong: Math.abs(stored.length - pcm.length) || 1 };
  const near = new Uint8Array(pcm.length);
  const margin = (marginMs * 16_000) / 1000;
  for (const [a, b] of bursts(pcm)) near.fill(1, Math.max(0, a - margin), Math.min(pcm.length, b + margin));
  for (const at of pausedAt) near.fill(0, at, Math.min(pcm.length, at + margin));
  let zeroed = 0;
  let wrong = 0;
  for (let i = 0; i < pcm.length; i++) {
    if (stored[i] === pcm[i]) continue;
    if (stored[i] !== 0 || near[i] === 1) wrong++;
    else zeroed++;
  }
  return { zeroed, wrong };
}
