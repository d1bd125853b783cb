import { writeFile } from 'node:fs/promises';
import { lastValueFrom, tap } from 'rxjs';
import { protocol, type SoundClone, type TranscriptionTask } from '@soundclone/core';
import { oneOf, parse, str } from '../args.js';
import { CliUsageError } from '../cli-error.js';
import { connect } from '../context.js';
import { toJson } from '../output.js';
import type { CommandContext } from '../command.js';

export const TRANSCRIBE_USAGE = `usage: soundclone transcribe FILE|URL [--wait] [--format ${protocol.DOWNLOAD_FORMATS.join('|')}] [--out PATH]
  FILE is uploaded first; an http(s) URL is fetched by the service.
  --wait     follow the task to its end, then download the transcript (--format, default txt)
  --out      write the download there (required for docx and pdf); default stdout
  --title TEXT --language CODE`;

export async function transcribe(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parse(ctx.args, {
    wait: { type: 'boolean', default: false },
    format: { type: 'string' },
    out: { type: 'string' },
    title: { type: 'string' },
    language: { type: 'string' },
  });
  if (values.help) return ctx.out.print(TRANSCRIBE_USAGE), 0;
  if (positionals.length !== 1) throw new CliUsageError('transcribe takes one FILE or URL');
  const input = positionals[0] as string;
  const format = oneOf(values, 'format', protocol.DOWNLOAD_FORMATS) ?? 'txt';
  const outPath = str(values, 'out');
  if ((format === 'docx' || format === 'pdf') && outPath === undefined) throw new CliUsageError(`--format ${format} is binary: give --out PATH`);
  const wait = values['wait'] === true || values['format'] !== undefined || outPath !== undefined;
  const connection = await connect(values, ctx.env, ctx.out);
  try {
    const { client } = connection;
    const isUrl = /^https?:\/\//i.test(input);
    let uploadId: string | undefined;
    if (!isUrl) {
      ctx.out.note(`uploading ${input}`);
      uploadId = (await client.uploads.create(input)).uploadId;
    }
    const title = str(values, 'title');
    const language = str(values, 'language');
    const task = await client.stt.transcriptions.create({
      ...(isUrl ? { mediaUrl: input } : { uploadId: uploadId as string }),
      ...(title !== undefined ? { title } : {}),
      ...(language !== undefined ? { languageHint: language } : {}),
    });
    ctx.out.note(`transcription ${task.transcriptionId}: ${task.status}`);
    if (!wait) {
      if (ctx.out.json) ctx.out.data(task);
      else ctx.out.print(task.transcriptionId);
      if (connection.local) ctx.out.note('the local reference server stops with this command: add --wait to see the result');
      return 0;
    }
    const final = await follow(ctx, client, task);
    if (final.status === 'FAILED') {
      ctx.out.note(`transcription failed: ${final.error?.errorCode ?? ''} ${final.error?.message ?? ''}`.trim());
      return 1;
    }
    const body = await client.downloads.get(final.transcriptionId, format);
    const text = typeof body === 'string' ? body : body instanceof Uint8Array ? body : `${toJson(body)}\n`;
    if (outPath !== undefined) {
      await writeFile(outPath, text);
      ctx.out.note(`wrote ${format} to ${outPath}`);
    } else {
      ctx.out.stdout.write(typeof text === 'string' && !text.endsWith('\n') ? `${text}\n` : text);
    }
    return final.status === 'COMPLETED' ? 0 : 1;
  } finally {
    await connection.close();
  }
}

/** Status changes as they happen (transcriptions.watch), with the elapsed time ticking on a terminal. */
async function follow(ctx: CommandContext, client: SoundClone, task: TranscriptionTask): Promise<TranscriptionTask> {
  const tty = ctx.out.stderr.isTTY === true;
  const started = Date.now();
  let status = task.status;
  const draw = (): void => void ctx.out.stderr.write(`\r\x1b[2K${status} ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const ticker = tty ? setInterval(draw, 200) : undefined;
  try {
    return await lastValueFrom(
      client.stt.transcriptions.watch(task.transcriptionId).pipe(
        tap((t) => {
          status = t.status;
          if (tty) draw();
          else ctx.out.note(`status ${t.status}`);
        }),
      ),
    );
  } finally {
    clearInterval(ticker);
    if (tty) ctx.out.stderr.write('\n');
  }
}
