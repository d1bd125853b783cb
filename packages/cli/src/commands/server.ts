import { randomBytes } from 'node:crypto';
import { parse, str } from '../args.js';
import { CliUsageError } from '../cli-error.js';
import type { CommandContext } from '../command.js';

export const SERVER_USAGE = `usage: soundclone server [--port 8787] [--host 127.0.0.1] [--access-key KEY] [--recognizer auto|pocketsphinx|deterministic]
  Runs the reference service until Ctrl-C. Without --access-key a random key is made and printed.
  --recognizer auto (the default) uses PocketSphinx when it is installed, else the deterministic one.
  The first stdout line is the base URL, the second the key.`;

export async function server(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parse(ctx.args, { port: { type: 'string' }, host: { type: 'string' } });
  if (values.help) return ctx.out.print(SERVER_USAGE), 0;
  if (positionals.length > 0) throw new CliUsageError('server takes no positional arguments');
  const port = Number(str(values, 'port') ?? '8787');
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new CliUsageError(`--port takes 0..65535, got ${String(str(values, 'port'))}`);
  const key = values.accessKey ?? `dev-${randomBytes(8).toString('hex')}`;
  const { startServer } = await import('@soundclone/server');
  const running = await startServer({ port, host: str(values, 'host') ?? '127.0.0.1', accessKeys: [key], recognizer: values.recognizer });
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
