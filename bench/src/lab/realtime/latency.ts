import { Resampler, SoundClone, type RealtimeSocketSession, type WebSocketConstructor } from '@soundclone/core';
import { WebSocket } from 'ws';
import { progress } from '../../collect/progress.js';
import { BENCH_KEY, hostServer } from '../server/host.js';
import { percentile, sleep, speech } from '../speech.js';

/** The client's added latency for one way of writing audio. */
export interface LatencyRow {
  readonly input: string;
  readonly frames: number;
  /** write() call to the frame handed to the WebSocket (encode, ring, framing, header), µs. */
  readonly sendP50Us: number;
  readonly sendP99Us: number;
  /** write() call to the frame written to the TCP socket (`ws`'s send callback), µs. */
  readonly socketP50Us: number;
  readonly socketP99Us: number;
  readonly socketMaxUs: number;
  /** How long the first sample of a frame waits for the frame to fill (20 ms frames) plus the resampler's delay, ms. */
  readonly framingMs: string;
}

/** The write() now running, read by the instrumented socket (one session at a time, synchronous send). */
let writeStartedAt = Number.NaN;
let samples: Array<{ send: number; socket: number }> = [];

/**
 * `ws` with every binary send timed: the frame is cut and sent synchronously inside write(), so the
 * write that is running is the one that completed the frame; `ws` calls back once the bytes are
 * written to the TCP socket.
 */
class TimedWebSocket extends WebSocket {
  override send(data: unknown, ...rest: unknown[]): void {
    if (typeof data === 'string' || Number.isNaN(writeStartedAt)) {
      (super.send as (d: unknown, ...r: unknown[]) => void)(data, ...rest);
      return;
    }
    const started = writeStartedAt;
    const sent = performance.now();
    super.send(data as Uint8Array, (error?: Error | null) => {
      if (error == null) samples.push({ send: (sent - started) * 1000, socket: (performance.now() - started) * 1000 });
    });
  }
}

/**
 * The client's added latency from write() to the frame on the socket: real sockets to the
 * reference server in a child process, audio written at 1× real time the way apps write it.
 */
export async function collectLatency(options: { quick: boolean }): Promise<LatencyRow[]> {
  const server = await hostServer({ in: 'child', recognizer: 'deterministic' });
  const seconds = options.quick ? 3 : 10;
  try {
    const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: server.url });
    const rows: LatencyRow[] = [];
    {
      const session = await client.stt.realtime.connect({ WebSocket: TimedWebSocket as unknown as WebSocketConstructor });
      const pcm = speech(seconds, 7);
      rows.push(await measure('PCM16 16 kHz, 20 ms writes (writePcm16)', session, pcm.length / 320, async (write) => {
        for (let at = 0; at < pcm.length; at += 320) {
          const block = pcm.subarray(at, at + 320);
          await paced(at / RATE);
          write(() => session.writePcm16(block));
        }
      }, '0 (whole frames)'));
    }
    {
      const session = await client.stt.realtime.connect({ WebSocket: TimedWebSocket as unknown as WebSocketConstructor, sampleRate: 48_000 });
      const float = new Float32Array(48_000 * seconds);
      for (let i = 0; i < float.length; i++) float[i] = 0.4 * Math.sin((2 * Math.PI * 330 * i) / 48_000);
      rows.push(await measure('Float32 48 kHz, 128-sample writes (AudioWorklet quantum)', session, (seconds * RATE) / 320, async (write) => {
        for (let at = 0; at < float.length; at += 128) {
          const block = float.subarray(at, at + 128);
          if ((at / 128) % 6 === 0) await paced(at / 48_000); // wake every 16 ms, like a worklet port batch
          write(() => session.write(block));
        }
      }, `≤ 20 + ${((new Resampler({ inputRate: 48_000, outputRate: RATE }).latencyFrames * 1000) / 48_000).toFixed(2)} (resampler)`));
    }
    return rows;
  } finally {
    await server.close();
  }
}

const RATE = 16_000;
let pacingStart = 0;

/** Waits until `atSeconds` of audio is due since the run began (1× real time). */
async function paced(atSeconds: number): Promise<void> {
  const wait = pacingStart + atSeconds * 1000 - performance.now();
  if (wait > 1) await sleep(wait);
}

async function measure(input: string, session: RealtimeSocketSession, expectedFrames: number, run: (write: (call: () => void) => void) => Promise<void>, framingMs: string): Promise<LatencyRow> {
  samples = [];
  pacingStart = performance.now();
  await run((call) => {
    writeStartedAt = performance.now();
    call();
    writeStartedAt = Number.NaN;
  });
  await session.finish();
  await sleep(50);
  const send = samples.map((s) => s.send).sort((a, b) => a - b);
  const socket = samples.map((s) => s.socket).sort((a, b) => a - b);
  if (samples.length < expectedFrames * 0.9) throw new Error(`latency: timed ${samples.length} frames of ${expectedFrames}`);
  const row: LatencyRow = {
    input,
    frames: samples.length,
    sendP50Us: percentile(send, 50),
    sendP99Us: percentile(send, 99),
    socketP50Us: percentile(socket, 50),
    socketP99Us: percentile(socket, 99),
    socketMaxUs: socket.at(-1) ?? Number.NaN,
    framingMs,
  };
  progress(`realtime latency: ${input}: write→socket p50 ${row.socketP50Us.toFixed(0)} µs, p99 ${row.socketP99Us.toFixed(0)} µs`);
  return row;
}
