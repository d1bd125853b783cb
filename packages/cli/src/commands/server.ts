import { randomBytes } from 'node:crypto';
import { CliUsageError } from '../cli-error.js';
import type { CommandContext } from '../command.js';

export const SERVER_NOTE = `Runs the reference service until Ctrl-C, with exactly the flags of the server's own command
(below). Without --access-key a random key is made and printed. The first stdout line is the base URL,
the second the key; --json prints both as one object.`;

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
  const { startServer } = await import('@soundclone/server');
  const running = await startServer(flags.options);
  for (const rule of flags.socketFaults) running.faults.socket.inject(rule);
  if (running.recognizer.notice !== undefined) ctx.out.note(running.recognizer.notice);
  if (ctx.out.json) ctx.out.data({ url: running.url, accessKey: key });
  else {
    ctx.out.print(running.url);
    ctx.out.print(key);
    ctx.out.note(`reference server listening (recognizer: ${running.recognizer.id}); try: SOUNDCLONE_BASE_URL=${running.url} SOUNDCLONE_ACCESS_KEY=${key} soundclone user`);
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
  await running.close();
  ctx.out.note('server stopped');
  return 0;
}
