import { DefaultReconnectPolicy, SoundClone, type RealtimeSocketSession } from '@soundclone/core';
import { ChaosProxy } from '@soundclone/server';
import { progress } from '../../collect/progress.js';
import { PcmDigest } from '../digest.js';
import { BENCH_KEY, hostServer, SOCKET_PATH } from '../server/host.js';
import { sleep } from '../speech.js';
import { BLOCK, LongAudio } from './audio.js';
import { Samples } from './samples.js';

const RATE = 16_000;
const BLOCKS_PER_SECOND = RATE / BLOCK;

export interface LongSessionOptions {
  /** Minutes of audio through the one session. */
  readonly minutes: number;
  /** Audio seconds per wall second. */
  readonly speed: number;
  readonly cutEverySeconds: number;
  readonly rotateEveryMinutes: number;
  /** A memory reading every this many audio minutes. */
  readonly readEveryMinutes: number;
}

export const LONG_SESSION_DEFAULTS: LongSessionOptions = { minutes: 60, speed: 30, cutEverySeconds: 30, rotateEveryMinutes: 5, readEveryMinutes: 1 };

/** One memory reading, both processes, at an audio time. */
export interface MemoryReading {
  readonly audioMinutes: number;
  readonly clientHeap: number;
  /** V8's reserved heap, and memory outside it (Buffers, ArrayBuffers), after the same collections. */
  readonly clientHeapTotal: number;
  readonly clientExternal: number;
  readonly clientRss: number;
  readonly serverHeap: number;
  readonly serverHeapTotal: number;
  readonly serverExternal: number;
  readonly serverRss: number;
  /** Lines held by the client session and by the server's. */
  readonly lines: number;
  readonly serverLines: number;
  readonly reconnects: number;
  /** Counts that must not grow per reconnect: listeners on the client session, Node handles in the client
   * process (timers, sockets), the server's open sockets and the listeners of its session. */
  readonly clientListeners: number;
  readonly clientHandles: number;
  readonly serverSockets: number;
  readonly serverListeners: number;
}

export interface Figures {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly count: number;
}

export interface LongSessionResult {
  readonly options: LongSessionOptions;
  /** The session's scaled timing, as given to connect(). */
  readonly scaled: { readonly stableWindowMs: number; readonly reconnectBaseMs: number; readonly reconnectMaxMs: number };
  readonly wallSeconds: number;
  readonly readings: readonly MemoryReading[];
  /** Estimated bytes of client heap one transcript line holds (a deep copy of session.lines, measured). */
  readonly bytesPerLine: number;
  /** The same for the server's lines, measured in the server process. */
  readonly serverBytesPerLine: number;
  readonly cuts: number;
  readonly rotations: number;
  readonly reconnects: number;
  readonly causes: Readonly<Record<string, number>>;
  readonly flappingReports: number;
  readonly bufferedHighWaterMs: number;
  readonly bufferFillHighWater: number;
  readonly ackLagMs: Figures;
  readonly partialLatencyMs: Figures;
  readonly finalLatencyMs: Figures;
  readonly reconnectMs: Figures;
  /** The health stream's own windows at the end (last 128 values; the SDK keeps p95, not p99). */
  readonly healthAtEnd: { readonly ackLagP50: number | null; readonly ackLagP95: number | null; readonly finalP50: number | null; readonly finalP95: number | null };
  readonly lines: number;
  readonly gaps: number;
  readonly status: string;
  readonly endState: string;
  readonly sentSamples: number;
  readonly receivedSamples: number;
  readonly clientDigest: string;
  readonly serverDigest: string;
  readonly serverStreams: number;
  readonly exact: boolean;
}

/** Two full collections: the second takes what the first's finalizers let go. */
function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
}

/**
 * One realtime session streams `minutes` of audio at `speed`× real time through a ChaosProxy to the
 * reference server (own process, deterministic recogniser, rotating every `rotateEveryMinutes` of audio
 * received), the proxy resetting the connection every `cutEverySeconds` of audio. Audio time runs on a
 * clock that stops while memory is read (so readings do not back audio up in the client's buffer); at
 * every `readEveryMinutes` both processes are collected and read. At the end: finish(), COMPLETED, the
 * server's digest of what it stored equals the client's of what it wrote.
 *
 * Everything the bench keeps per event is preallocated (Samples), so its own bookkeeping does not show
 * up as growth in the client's heap.
 */
export async function runLongSession(options: LongSessionOptions = LONG_SESSION_DEFAULTS): Promise<LongSessionResult> {
  const { minutes, speed, cutEverySeconds, rotateEveryMinutes, readEveryMinutes } = options;
  const totalBlocks = Math.round(minutes * 60 * BLOCKS_PER_SECOND);
  const cutEveryBlocks = 2 * Math.round((cutEverySeconds * BLOCKS_PER_SECOND) / 2);
  const readEveryBlocks = Math.round(readEveryMinutes * 60 * BLOCKS_PER_SECOND);
  // Wall-clock constants of the session scaled by the speed, so that a cut every 30 s of audio is what it
  // would be at 1×: routine, not flapping. At 1× the SDK's defaults (30 s stable window, 250 ms–5 s
  // backoff) would call cuts every 30 s flapping; here the window is half the wall time between cuts.
  const cutWallMs = (cutEverySeconds * 1000) / speed;
  const scaled = { stableWindowMs: Math.round(cutWallMs / 2), reconnectBaseMs: Math.max(5, Math.round(250 / speed)), reconnectMaxMs: Math.max(20, Math.round(5000 / speed)) };

  // The server in its own process (its heap and RSS are its own), with --expose-gc for its readings and
  // the deterministic recogniser wrapped to digest every sample it stores.
  const rotateEverySamples = Math.round(rotateEveryMinutes * 60 * RATE);
  const server = await hostServer({
    in: 'child',
    recognizer: 'deterministic',
    flags: rotateEverySamples > 0 ? ['--rotate-every-samples', String(rotateEverySamples)] : [],
    probes: ['digest'],
    exposeGc: true,
  });
  const target = new URL(server.url);
  const proxy = await new ChaosProxy(Number(target.port), target.hostname).listen();
  const started = Date.now();
  let opened: RealtimeSocketSession | undefined;
  try {
    const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: server.url });
    const session = await client.stt.realtime.connect({
      socketUrl: `ws://127.0.0.1:${String(proxy.port)}${SOCKET_PATH}`,
      stableWindowMs: scaled.stableWindowMs,
      reconnect: new DefaultReconnectPolicy({ baseMs: scaled.reconnectBaseMs, maxMs: scaled.reconnectMaxMs }),
    });
    opened = session;
    const audio = new LongAudio();
    const digest = new PcmDigest();
    // Wall time each block was written: the sample clock behind the latencies (as the health meter's).
    const writtenAt = new Float64Array(totalBlocks);
    const ackLag = new Samples(Math.ceil(minutes * 60 * 20 * 4) + 1000);
    const partialLatency = new Samples(Math.ceil(minutes * 60 * 50) + 1000);
    const finalLatency = new Samples(Math.ceil(minutes * 60 * 4) + 1000);
    const reconnectMs = new Samples(10_000);
    const causes = new Map<string, number>();
    let flappingReports = 0;
    let rotations = 0;
    let bufferedHigh = 0;
    let fillHigh = 0;
    let ackedNow = 0;

    const blockAt = (sample: number): number | undefined => (sample <= 0 ? undefined : writtenAt[Math.min(totalBlocks, Math.ceil(sample / BLOCK)) - 1]);
    session.on('message', (m) => {
      if (m.type !== 'audio.ack') return;
      // Audio sent and not yet acknowledged as the ack arrives. `message` fires after the session applied
      // the ack, and applying it may have sent more: an upper bound by at most one pump's frames.
      ackLag.add(Math.max(0, (session.stats.sentSamples - m.receivedSamples) / (RATE / 1000)));
      ackedNow = m.receivedSamples;
    });
    session.on('partial', () => {
      const at = blockAt(ackedNow);
      if (at !== undefined && at > 0) partialLatency.add(Date.now() - at);
    });
    session.on('line', (line) => {
      if (typeof line.endMs !== 'number') return;
      const at = blockAt(Math.round(line.endMs * (RATE / 1000)));
      if (at !== undefined && at > 0) finalLatency.add(Date.now() - at);
    });
    session.on('rotated', () => void (rotations += 1));
    session.on('health', (h) => {
      if (h.state === 'flapping') flappingReports += 1;
      if (h.kind === 'lost' && h.lastReconnect !== null) causes.set(h.lastReconnect.cause, (causes.get(h.lastReconnect.cause) ?? 0) + 1);
      if (h.kind === 'reconnected' && h.lastReconnect?.durationMs != null) reconnectMs.add(h.lastReconnect.durationMs);
    });

    const readings: MemoryReading[] = [];
    const read = async (block: number): Promise<void> => {
      // A reading of the steady state: the socket up and streaming (not in the middle of a rotation).
      for (let waited = 0; session.state !== 'streaming' && waited < 2000; waited += 5) await sleep(5);
      collect();
      const m = process.memoryUsage();
      const s = await server.ask({ type: 'memory', sessionId: session.sessionId });
      readings.push({
        audioMinutes: block / BLOCKS_PER_SECOND / 60,
        clientHeap: m.heapUsed,
        clientHeapTotal: m.heapTotal,
        clientExternal: m.external,
        clientRss: m.rss,
        serverHeap: s.heapUsed,
        serverHeapTotal: s.heapTotal,
        serverExternal: s.external,
        serverRss: server.rssFromProc(),
        lines: session.lines.length,
        serverLines: s.lines,
        reconnects: session.health.reconnects,
        clientListeners: session.eventNames().reduce((n, name) => n + session.listenerCount(name), 0),
        clientHandles: process.getActiveResourcesInfo().length,
        serverSockets: s.sockets,
        serverListeners: s.sessionListeners,
      });
    };

    let cuts = 0;
    let block = 0;
    let clockStart = Date.now();
    let clockBlocks = 0;
    await read(0);
    while (block < totalBlocks) {
      // Blocks due on the audio clock (speed × the wall time since it last started).
      const due = Math.min(totalBlocks, clockBlocks + Math.floor(((Date.now() - clockStart) * speed) / 20));
      while (block < due) {
        const pcm = audio.block(block);
        digest.add(pcm);
        if (session.writePcm16(pcm) !== BLOCK) throw new Error(`the session refused audio at block ${String(block)} (${session.state})`);
        writtenAt[block] = Date.now();
        block += 1;
        // Cuts fall between readings (at 15 s, 45 s, … of each minute), so a reading finds a socket up.
        if ((block + cutEveryBlocks / 2) % cutEveryBlocks === 0 && block < totalBlocks && proxy.cut() > 0) cuts += 1;
        if (block % readEveryBlocks === 0) {
          await read(block);
          // The audio clock stops while reading: start it again from here.
          clockStart = Date.now();
          clockBlocks = block;
          break;
        }
      }
      const stats = session.stats;
      if (stats.bufferedSamples > bufferedHigh) bufferedHigh = stats.bufferedSamples;
      if (stats.capacitySamples > 0 && stats.bufferedSamples / stats.capacitySamples > fillHigh) fillHigh = stats.bufferedSamples / stats.capacitySamples;
      if (block % (readEveryBlocks * 5) === 0 && block > 0) progress(`long-session: ${(block / BLOCKS_PER_SECOND / 60).toFixed(0)}/${String(minutes)} audio min, ${String(cuts)} cuts, ${String(session.health.reconnects)} reconnects, ${String(rotations)} rotations, ${String(session.lines.length)} lines`);
      await sleep(2);
    }
    const result = await session.finish({ timeoutMs: 60_000 });
    const health = session.health;
    const served = await server.ask({ type: 'digest' });
    const mine = digest.value;
    // The lines' share of the client heap: a deep copy of them, measured (a line's own objects, as the
    // session holds them, are about the same size as their copy).
    collect();
    const before = process.memoryUsage().heapUsed;
    const copy = structuredClone(session.lines);
    collect();
    const bytesPerLine = copy.length > 0 ? Math.max(0, process.memoryUsage().heapUsed - before) / copy.length : 0;
    const serverLines = await server.ask({ type: 'line-bytes', sessionId: session.sessionId });
    const received = Number(result.session.usage.receivedSamples);
    return {
      options,
      scaled,
      wallSeconds: (Date.now() - started) / 1000,
      readings,
      bytesPerLine,
      serverBytesPerLine: serverLines.bytesPerLine,
      cuts,
      rotations,
      reconnects: health.reconnects,
      causes: Object.fromEntries(causes),
      flappingReports,
      bufferedHighWaterMs: bufferedHigh / (RATE / 1000),
      bufferFillHighWater: fillHigh,
      ackLagMs: ackLag.figures(),
      partialLatencyMs: partialLatency.figures(),
      finalLatencyMs: finalLatency.figures(),
      reconnectMs: reconnectMs.figures(),
      healthAtEnd: { ackLagP50: health.ackLagMs.p50, ackLagP95: health.ackLagMs.p95, finalP50: health.finalLatencyMs.p50, finalP95: health.finalLatencyMs.p95 },
      lines: session.lines.length,
      gaps: session.gaps.length,
      status: result.session.status,
      endState: session.state,
      sentSamples: mine.samples,
      receivedSamples: received,
      clientDigest: mine.hash,
      serverDigest: served.hash,
      serverStreams: served.streams,
      exact: result.session.status === 'COMPLETED' && received === mine.samples && served.samples === mine.samples && served.hash === mine.hash && session.gaps.length === 0,
    };
  } finally {
    // A run that threw leaves no session reconnecting in the background (a no-op once finished).
    opened?.close();
    await proxy.close();
    await server.close();
  }
}
