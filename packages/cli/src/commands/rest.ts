import { parse, positiveInt, str } from '../args.js';
import { CliUsageError } from '../cli-error.js';
import { connect } from '../context.js';
import type { CommandContext } from '../command.js';

export const VOICES_USAGE = `usage: soundclone voices list
       soundclone voices create --name NAME FILE [FILE...]   (1-25 mp3, wav or m4a files)
       soundclone voices rename ID NAME`;

export async function voices(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parse(ctx.args, { name: { type: 'string' } });
  if (values.help) return ctx.out.print(VOICES_USAGE), 0;
  const [action, ...rest] = positionals;
  if (action !== 'list' && action !== 'create' && action !== 'rename') throw new CliUsageError('voices takes list, create or rename');
  if (action === 'list' && rest.length > 0) throw new CliUsageError('voices list takes no arguments');
  if (action === 'create' && (str(values, 'name') === undefined || rest.length === 0)) throw new CliUsageError('voices create takes --name NAME and at least one FILE');
  if (action === 'rename' && rest.length !== 2) throw new CliUsageError('voices rename takes ID NAME');
  const connection = await connect(values, ctx.env, ctx.out);
  try {
    const { client } = connection;
    if (action === 'list') {
      const list = await client.voices.list();
      ctx.out.table(list, [['id', (v) => v.id], ['name', (v) => v.name], ['type', (v) => v.type], ['files', (v) => v.fileCount], ['bytes', (v) => v.totalFileSize]]);
    } else if (action === 'create') {
      const { id } = await client.voices.create({ name: str(values, 'name') as string, files: rest });
      if (ctx.out.json) ctx.out.data({ id });
      else ctx.out.print(`created voice ${id}`);
    } else {
      const [id, name] = rest as [string, string];
      await client.voices.rename(id, name);
      if (ctx.out.json) ctx.out.data({ id, name });
      else ctx.out.print(`renamed voice ${id} to ${name}`);
    }
    return 0;
  } finally {
    await connection.close();
  }
}

export async function user(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parse(ctx.args, {});
  if (values.help) return ctx.out.print('usage: soundclone user [--json]'), 0;
  if (positionals.length > 0) throw new CliUsageError('user takes no arguments');
  const connection = await connect(values, ctx.env, ctx.out);
  try {
    const info = await connection.client.user.info();
    const b = info.benefit;
    ctx.out.fields(
      [
        ['plan', info.plan],
        ['status', info.status],
        ['resets in', `${String(info.resetInDays)} days`],
        ['voices', `${String(b.usedVoices)} / ${String(b.totalVoices)}`],
        ['monthly characters', `${String(b.usedMonthlyChars)} / ${String(b.totalMonthlyChars)}`],
        ['order characters', `${String(b.usedOrderChars)} / ${String(b.totalOrderChars)}`],
      ],
      info,
    );
    return 0;
  } finally {
    await connection.close();
  }
}

export const HISTORY_USAGE = 'usage: soundclone history [--limit N] [--json]   (transcriptions, newest first; default 20)';

export async function history(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parse(ctx.args, { limit: { type: 'string' } });
  if (values.help) return ctx.out.print(HISTORY_USAGE), 0;
  if (positionals.length > 0) throw new CliUsageError('history takes no arguments');
  const limit = positiveInt(values, 'limit') ?? 20;
  const connection = await connect(values, ctx.env, ctx.out);
  try {
    const items = [];
    for await (const item of connection.client.stt.transcriptions.list()) {
      items.push(item);
      if (items.length >= limit) break;
    }
    ctx.out.table(items, [
      ['id', (t) => t.transcriptionId],
      ['status', (t) => t.status],
      ['title', (t) => t.title],
      ['duration', (t) => `${(Number(t.audioDurationMs) / 1000).toFixed(1)} s`],
      ['characters', (t) => t.characters],
      ['created', (t) => t.timestamps.createdAt],
    ]);
    return 0;
  } finally {
    await connection.close();
  }
}
