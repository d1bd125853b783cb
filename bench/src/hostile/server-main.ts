import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { BENCH_KEY, type ChildRequest, type ServerStats } from './protocol.js';

/**
 * The reference server for the hostile-client bench, in its own process (`fork`ed by run.ts). It
 * measures itself from the inside: event-loop delay with perf_hooks and its memory every 100 ms, and
 * reports over the IPC channel only, so no bench hook reaches the server's HTTP surface.
 */
const SERVER = fileURLToPath(new URL('../../../packages/server/dist/index.js', import.meta.url));

interface Running {
  readonly url: string;
  readonly sockets: { readonly size: number };
  close(): Promise<void>;
}

const MiB = 1024 * 1024;
const held = (): number => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};

async function main(): Promise<void> {
  const { startServer } = (await import(SERVER)) as { startServer: (options: Record<string, unknown>) => Promise<Running> };
  // Attackers and the healthy session share one key: the per-account session limit would refuse most
  // attackers at creation (that defence has its own tests); raised here so every attack reaches the sockets.
  const server = await startServer({ accessKeys: [BENCH_KEY], recognizer: 'deterministic', maxRealtimeSessionsPerAccount: 1000 });
  const loop = monitorEventLoopDelay({ resolution: 2 });
  loop.enable();
  let baseRss = process.memoryUsage().rss;
  let baseHeld = held();
  let peakRss = baseRss;
  let peakHeld = baseHeld;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    peakHeld = Math.max(peakHeld, held());
  }, 100);
  const send = (message: unknown): void => void process.send?.(message);
  process.on('message', (request: ChildRequest) => {
    if (request.type === 'reset') {
      (globalThis as { gc?: () => void }).gc?.();
      loop.reset();
      baseRss = peakRss = process.memoryUsage().rss;
      baseHeld = peakHeld = held();
      send({ type: 'reset-done' });
    } else if (request.type === 'stats') {
      const stats: ServerStats = {
        type: 'server-stats',
        loopP99Ms: loop.percentile(99) / 1e6,
        loopMaxMs: loop.max / 1e6,
        baseRssMiB: baseRss / MiB,
        peakRssMiB: peakRss / MiB,
        baseHeldMiB: baseHeld / MiB,
        peakHeldMiB: peakHeld / MiB,
        sockets: server.sockets.size,
      };
      send(stats);
    } else if (request.type === 'stop') {
      clearInterval(sampler);
      loop.disable();
      void server.close().then(() => process.exit(0));
    }
  });
  send({ type: 'ready', url: server.url });
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
