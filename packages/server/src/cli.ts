import { isServerFlagError, parseServerFlags, SERVER_USAGE } from './cli-flags.js';
import { isRecognizerError } from './recognition/errors.js';
import { isStateStoreError } from './store/journal/state-error.js';
import { isStoreError } from './store/store.js';
import { startServer } from './server.js';

/**
 * `pnpm --filter @soundclone/server start -- --port 8787 --access-key dev-key [...]`: the flags are
 * cli-flags.ts's (SERVER_USAGE lists them). The first stdout line is the base URL; the recogniser's
 * fallback notice, if any, goes to stderr.
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
    if (!isRecognizerError(error) && !isStateStoreError(error) && !isStoreError(error)) throw error;
    process.stderr.write(`error: ${error.message} [${error.code}]\n`);
    process.exitCode = 1;
    return;
  }
  if (server.recognizer.notice !== undefined) process.stderr.write(`${server.recognizer.notice}\n`);
  for (const rule of flags.socketFaults) server.faults.socket.inject(rule);
  process.stdout.write(`${server.url}\n`);
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
