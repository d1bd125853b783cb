import { isServerFlagError, parseServerFlags, SERVER_USAGE } from './cli-flags.js';
import { isRecognizerError } from './recognition/errors.js';
import { isStateStoreError } from './store/journal/state-error.js';
import { isStoreError } from './store/store.js';
import { isLiveStateError } from './live/live-error.js';
import { startServer } from './server.js';

/**
 * `pnpm --filter @soundclone/server start -- --port 8787 --access-key dev-key [...]`: the flags are
 * cli-flags.ts's (SERVER_USAGE lists them). The first stdout line is the base URL; the recogniser's
 * fallback notice, if any, goes to stderr. SIGTERM drains (RunningServer.drain: /health 503 for
 * --drain-grace-ms, then close) and exits 0; SIGINT closes at once; either exits 1 past --drain-timeout-ms.
 */
async function main(): Promise<void> {
  let flags;
  try {
    flags = parseServerFlags(process.argv.slice(2), process.env);
  } catch (error) {
    if (!isServerFlagError(error)) throw error;
    process.stderr.write(`error: ${error.message}\n`);
    process.exitCode = 2;
    return;
  }
  if (flags.help) {
    process.stdout.write(SERVER_USAGE);
    return;
  }
  let server;
  try {
    server = await startServer(flags.options);
  } catch (error) {
    // A recognizer that cannot run, a data directory held by another process or damaged, a database
    // that cannot be reached or has a newer schema: one line.
    if (!isRecognizerError(error) && !isStateStoreError(error) && !isStoreError(error) && !isLiveStateError(error)) throw error;
    process.stderr.write(`error: ${error.message} [${error.code}]\n`);
    process.exitCode = 1;
    return;
  }
  if (server.recognizer.notice !== undefined) process.stderr.write(`${server.recognizer.notice}\n`);
  for (const rule of flags.socketFaults) server.faults.socket.inject(rule);
  process.stdout.write(`${server.url}\n`);
  const running = server;
  let stopping = false;
  // SIGINT stops at once; SIGTERM (what an orchestrator sends) drains first: /health answers 503 so the
  // balancer takes this node out, new realtime sessions are refused, then sockets get 4503, the server
  // and the store close, and the process exits 0. Bounded: past the drain timeout it exits 1.
  const stop = (how: 'close' | 'drain'): void => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      process.stderr.write(`error: the drain did not end within ${flags.drain.timeoutMs} ms; exiting\n`);
      process.exit(1);
    }, flags.drain.timeoutMs).unref();
    const done = how === 'drain' ? running.drain({ graceMs: flags.drain.graceMs }) : running.close();
    done.then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`error: stopping failed: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('close'));
  process.on('SIGTERM', () => stop('drain'));
}

void main();
