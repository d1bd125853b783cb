import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { localAccessKey, localDataDir } from '../local-state.js';
import { publishHeld, stopHeld } from '../local-server/local-server.js';
import { CliUsageError } from '../cli-error.js';
import type { CommandContext } from '../command.js';

export const SERVER_NOTE = `Runs the reference service until Ctrl-C, with exactly the flags of the server's own command
(below). Without --access-key a random key is made and printed. The first stdout line is the base URL,
the second the key; --json prints both as one object. With --data-dir the CLI's own data directory
(SOUNDCLONE_DATA_DIR, else the default) and the default --host, other soundclone commands run meanwhile
use this server (with the local key, which it also takes) instead of starting their own.`;

export async function server(ctx: CommandContext): Promise<number> {
  const { parseServerFlags, isServerFlagError, SERVER_USAGE } = await import('@soundclone/server');
  // The CLI's own output flags; every other argument is the server's.
  const argv = ctx.args.filter((arg) => arg !== '--json' && arg !== '--debug');
  const withKey = argv.some((arg) => arg === '--access-key' || arg.startsWith('--access-key=')) || argv.includes('--help') || argv.includes('-h')
    ? argv.map((arg) => (arg === '-h' ? '--help' : arg))
    : [...argv, '--access-key', `dev-${randomBytes(8).toString('hex')}`];
  let flags;
  try {
    flags = parseServerFlags(withKey);
  } catch (caught) {
    if (isServerFlagError(caught)) throw new CliUsageError(caught.message);
    throw caught;
  }
  if (flags.help) return ctx.out.print(`usage: soundclone server [flags]\n${SERVER_NOTE}\n\n${SERVER_USAGE.replace(/^usage: soundclone-server /, 'flags: ')}`), 0;
  const key = flags.options.accessKeys[0] as string;
  // Over the directory the other commands keep their state in, and on loopback only, the server is
  // theirs too: it takes the local key (its account is the one they use) and publishes its address, so a
  // command run meanwhile uses it instead of waiting for the directory. Anywhere else it stays apart.
  const dataDir = flags.options.dataDir !== undefined ? resolve(flags.options.dataDir) : undefined;
  const shared = dataDir !== undefined && dataDir === localDataDir(ctx.env) && flags.options.host === '127.0.0.1';
  const options = shared ? { ...flags.options, accessKeys: [...flags.options.accessKeys, localAccessKey(dataDir)] } : flags.options;
  const { startServer } = await import('@soundclone/server');
  const running = await startServer(options);
  if (shared) publishHeld(dataDir, running);
  else if (dataDir !== undefined && dataDir === localDataDir(ctx.env)) ctx.out.note(`listening on ${flags.options.host}, not 127.0.0.1: other soundclone commands are not pointed at this server`);
  for (const rule of flags.socketFaults) running.faults.socket.inject(rule);
  if (running.recognizer.notice !== undefined) ctx.out.note(running.recognizer.notice);
  if (ctx.out.json) ctx.out.data({ url: running.url, accessKey: key });
  else {
    ctx.out.print(running.url);
    ctx.out.print(key);
    ctx.out.note(`reference server listening (recognizer: ${running.recognizer.id}); try: SOUNDCLONE_BASE_URL=${running.url} SOUNDCLONE_ACCESS_KEY=${key} soundclone user`);
    if (shared) ctx.out.note(`it keeps the local state of ${dataDir}: soundclone commands run meanwhile without --base-url use it too`);
  }
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  if (shared) await stopHeld(dataDir, running, ctx.out);
  else await running.close();
  ctx.out.note('server stopped');
  return 0;
}
