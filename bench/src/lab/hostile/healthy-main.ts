import { SoundClone, type WebSocketConstructor } from '@soundclone/core';
import { WebSocket } from 'ws';
import { percentile, speech } from '../speech.js';
import { BENCH_KEY } from '../server/host.js';
import { answerRequests, sendReady } from '../server/ipc.js';

/**
 * The healthy client of the hostile-client bench, in its own process: one SDK realtime session that
 * streams speech in 20 ms frames at 1× real time for as long as the bench runs, and times every
 * frame from writePcm16() to the `audio.ack` that covers its last sample (the server acks at most
 * every 50 ms, so ~50 ms is the floor of the p99 on an idle server). Forked by run.ts; answers `reset`,
 * `acks` and `stop` over IPC (../server/ipc.ts).
 */
const RATE = 16_000;
const FRAME = 320;

async function main(): Promise<void> {
  const url = process.argv[2];
  if (url === undefined) throw new Error('usage: healthy-main.js <server url>');
  const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: url });
  const session = await client.stt.realtime.connect({ WebSocket: WebSocket as unknown as WebSocketConstructor });
  const pending: Array<{ end: number; at: number }> = [];
  let stopped = false;
  let latencies: number[] = [];
  let reconnects = 0;
  let failed: string | null = null;
  // A protocol timing, so the raw message: the ack as the server sent it.
  session.on('message', (message) => {
    if (message.type !== 'audio.ack') return;
    const now = performance.now();
    while (pending.length > 0 && pending[0]!.end <= message.receivedSamples) latencies.push(now - pending.shift()!.at);
  });
  session.on('reconnecting', () => void (reconnects += 1));
  session.on('state', (change) => {
    if (change.to === 'failed' || change.to === 'closed') failed = `${change.to}: ${change.reason}`;
  });
  answerRequests({
    reset: () => {
      latencies = [];
      reconnects = 0;
      return { type: 'reset' };
    },
    acks: () => {
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        type: 'acks',
        acks: sorted.length,
        ackP50Ms: percentile(sorted, 50),
        ackP99Ms: percentile(sorted, 99),
        ackMaxMs: sorted.at(-1) ?? Number.NaN,
        reconnects,
        failed,
      };
    },
    stop: () => void (stopped = true),
  });
  sendReady();

  // One minute of speech, looped; the stream position keeps growing.
  const pcm = speech(60, 3);
  let sent = 0;
  const started = performance.now();
  while (!stopped && failed === null) {
    const due = started + (sent / RATE) * 1000;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const at = sent % pcm.length;
    const block = pcm.subarray(at, Math.min(pcm.length, at + FRAME));
    // Timed before the call: the frame goes on the socket inside writePcm16.
    pending.push({ end: sent + block.length, at: performance.now() });
    session.writePcm16(block);
    sent += block.length;
  }
  await session.finish().catch(() => undefined);
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
