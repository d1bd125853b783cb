import { EnergyRecognizer, startServer, type Recognizer, type RecognizerStream } from '@soundclone/server';
import { PcmDigest } from './digest.js';
import type { ServerReply, ServerRequest } from './protocol.js';

/**
 * The reference server for the long-session bench, in its own process (`fork`ed with --expose-gc by
 * session.ts): the built service with the deterministic recogniser, wrapped so that every sample the
 * server stores is folded into a digest on its way to the recogniser (the stored audio itself would be
 * 115 MB an hour and would be most of what is measured). Its heap after a full GC, the digest and the
 * open sockets are read over the IPC channel only: nothing is added to the server's HTTP surface.
 *
 * argv: access key, samples per epoch before the server rotates (0: never).
 */
/** The deterministic recogniser, with every pushed sample digested (push sees each stored sample once, in order). */
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

async function main(): Promise<void> {
  const [key = 'bench-key', rotateText = '0'] = process.argv.slice(2);
  const rotateEverySamples = Number(rotateText);
  const digest = new PcmDigest();
  const opened = { streams: 0 };
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    accessKeys: [key],
    recognizer: digesting(new EnergyRecognizer(), digest, opened),
    ...(rotateEverySamples > 0 ? { realtimeTiming: { rotateEverySamples } } : {}),
  });
  const gc = (globalThis as { gc?: () => void }).gc;
  const send = (message: ServerReply): void => void process.send?.(message);
  process.on('message', (request: ServerRequest) => {
    if (request.type === 'memory') {
      gc?.();
      gc?.();
      const m = process.memoryUsage();
      const session = request.sessionId === undefined ? undefined : server.services.realtime.byId(request.sessionId);
      send({ type: 'memory', heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, rss: m.rss, sockets: server.sockets.size, lines: session?.audio.lines.length ?? 0, sessionListeners: session?.audio.listenerCount ?? 0 });
    } else if (request.type === 'line-bytes') {
      const lines = server.services.realtime.byId(request.sessionId)?.audio.lines ?? [];
      gc?.();
      gc?.();
      const before = process.memoryUsage().heapUsed;
      const copy = structuredClone(lines);
      gc?.();
      gc?.();
      const grown = process.memoryUsage().heapUsed - before;
      send({ type: 'line-bytes', bytesPerLine: copy.length > 0 ? Math.max(0, grown) / copy.length : 0, lines: copy.length });
    } else if (request.type === 'digest') {
      send({ type: 'digest', ...digest.value, streams: opened.streams });
    } else if (request.type === 'stop') {
      void server.close().then(() => process.exit(0));
    }
  });
  send({ type: 'ready', url: server.url });
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
