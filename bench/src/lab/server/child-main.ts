import { monitorEventLoopDelay } from 'node:perf_hooks';
import { chooseRecognizer, parseServerFlags, startServer, type Recognizer, type RecognizerStream } from '@soundclone/server';
import { PcmDigest } from '../digest.js';
import type { ChildConfig } from './host.js';
import { answerRequests, sendReady } from './ipc.js';

/**
 * The reference server in its own process, `fork`ed by host.ts (`hostServer({ in: 'child' })`): started
 * as its CLI starts it (the CLI's flags, parseServerFlags, startServer, the flags' socket faults), plus the
 * probes the experiment asked for, and read over the IPC channel only (ipc.ts): nothing is added to the
 * server's HTTP surface.
 *
 * argv[2]: ChildConfig as JSON.
 */
const MiB = 1024 * 1024;

/** Every pushed sample digested on its way in (push sees each stored sample once, in order). */
function digesting(inner: Recognizer, digest: PcmDigest, opened: { streams: number }): Recognizer {
  return {
    id: inner.id,
    recognize: (request) => inner.recognize(request),
    openStream(options): RecognizerStream {
      const stream = inner.openStream(options);
      opened.streams += 1;
      return {
        push(samples) {
          digest.add(samples);
          return stream.push(samples);
        },
        flush: () => stream.flush(),
        get partial() {
          return stream.partial;
        },
        ...(stream.close !== undefined ? { close: () => stream.close?.() } : {}),
      };
    },
  };
}

/** Two full collections: the second takes what the first's finalizers let go (no-op without --expose-gc). */
function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
}

const held = (): number => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '') as ChildConfig;
  const { options, socketFaults } = parseServerFlags(config.flags);

  // The stored audio itself would be 115 MB an hour and most of what the long session measures: a digest instead.
  const digest = new PcmDigest();
  const opened = { streams: 0 };
  const chosen = config.probes.includes('digest') ? chooseRecognizer(options.recognizer, options.pocketsphinx) : undefined;
  const server = await startServer(chosen === undefined ? options : { ...options, recognizer: digesting(chosen.recognizer, digest, opened) });
  if (chosen?.notice !== undefined) process.stderr.write(`${chosen.notice}\n`);
  else if (server.recognizer.notice !== undefined) process.stderr.write(`${server.recognizer.notice}\n`);
  for (const rule of socketFaults) server.faults.socket.inject(rule);

  // Probe `loop`: event-loop delay and memory peaks since the last reset.
  const loop = config.probes.includes('loop') ? monitorEventLoopDelay({ resolution: 2 }) : undefined;
  loop?.enable();
  let baseRss = process.memoryUsage().rss;
  let baseHeld = held();
  let peakRss = baseRss;
  let peakHeld = baseHeld;
  const sampler = loop === undefined ? undefined : setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    peakHeld = Math.max(peakHeld, held());
  }, 100);

  answerRequests({
    reset: () => {
      (globalThis as { gc?: () => void }).gc?.();
      loop?.reset();
      baseRss = peakRss = process.memoryUsage().rss;
      baseHeld = peakHeld = held();
      return { type: 'reset' };
    },
    load: () => ({
      type: 'load',
      loopP99Ms: (loop?.percentile(99) ?? Number.NaN) / 1e6,
      loopMaxMs: (loop?.max ?? Number.NaN) / 1e6,
      baseRssMiB: baseRss / MiB,
      peakRssMiB: peakRss / MiB,
      baseHeldMiB: baseHeld / MiB,
      peakHeldMiB: peakHeld / MiB,
      sockets: server.sockets.size,
    }),
    memory: (request) => {
      collect();
      const m = process.memoryUsage();
      const session = request.sessionId === undefined ? undefined : server.services.realtime.byId(request.sessionId);
      return { type: 'memory', heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, rss: m.rss, sockets: server.sockets.size, lines: session?.audio.lines.length ?? 0, sessionListeners: session?.audio.listenerCount ?? 0 };
    },
    'line-bytes': (request) => {
      const lines = server.services.realtime.byId(request.sessionId)?.audio.lines ?? [];
      collect();
      const before = process.memoryUsage().heapUsed;
      const copy = structuredClone(lines);
      collect();
      const grown = process.memoryUsage().heapUsed - before;
      return { type: 'line-bytes', bytesPerLine: copy.length > 0 ? Math.max(0, grown) / copy.length : 0, lines: copy.length };
    },
    digest: () => ({ type: 'digest', ...digest.value, streams: opened.streams }),
    stop: () => {
      if (sampler !== undefined) clearInterval(sampler);
      loop?.disable();
      void server.close().then(() => {
        if (chosen?.owned === true) chosen.recognizer.close?.();
        process.exit(0);
      });
    },
  });
  sendReady(server.url);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
