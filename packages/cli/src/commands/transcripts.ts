import { accessSync, constants, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { type SoundClone, type TranscriptionTask } from '@soundclone/core';
import { protocol } from '@soundclone/core/internal';
import { oneOf, parse, str } from '../args.js';
import { CliUsageError } from '../cli-error.js';
import { connect } from '../context.js';
import { toJson, type Output } from '../output.js';
import type { CommandContext } from '../command.js';

type DownloadFormat = protocol.DownloadFormat;

export const TRANSCRIPTS_USAGE = `usage: soundclone transcripts get ID [--format ${protocol.DOWNLOAD_FORMATS.join('|')}] [--out PATH]
       soundclone transcripts wait ID [--format F] [--out PATH]
  ID is a transcription id, as printed by \`soundclone transcribe FILE\` (without --wait) or \`soundclone history\`.
  get    downloads the transcript of a finished transcription (default --format txt)
  wait   follows the transcription to its end, then downloads it like get
  --out  write the download there; default stdout (docx and pdf only when stdout is not a terminal)`;

/** `transcripts get|wait ID`: the transcript of a transcription started earlier, by its id. */
export async function transcripts(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parse(ctx.args, { format: { type: 'string' }, out: { type: 'string' } });
  if (values.help) return ctx.out.print(TRANSCRIPTS_USAGE), 0;
  const [action, id, ...rest] = positionals;
  if (action !== 'get' && action !== 'wait') throw new CliUsageError('transcripts takes get ID or wait ID');
  if (id === undefined || rest.length > 0) throw new CliUsageError(`transcripts ${action} takes one transcription ID`);
  const target = downloadTarget(values, ctx.out);
  const connection = await connect(values, ctx.env, ctx.out);
  try {
    const { client } = connection;
    const task = action === 'wait' ? await follow(ctx.out, client, await client.stt.transcriptions.get(id)) : await client.stt.transcriptions.get(id);
    return await deliver(ctx.out, client, task, target);
  } finally {
    await connection.close();
  }
}

export interface DownloadTarget {
  readonly format: DownloadFormat;
  /** undefined: stdout. */
  readonly outPath: string | undefined;
}

/**
 * --format and --out, checked before anything connects. Binary formats may go to stdout when it is
 * redirected (a file or a pipe); on a terminal they would print as garbage, so there --out is needed.
 */
export function downloadTarget(values: Record<string, unknown>, out: Output): DownloadTarget {
  const format = oneOf(values, 'format', protocol.DOWNLOAD_FORMATS) ?? 'txt';
  const outPath = str(values, 'out');
  if ((format === 'docx' || format === 'pdf') && outPath === undefined && out.tty) {
    throw new CliUsageError(`--format ${format} is binary and stdout is a terminal: give --out PATH or redirect stdout`);
  }
  if (outPath !== undefined) checkWritable(outPath);
  return { format, outPath };
}

/**
 * --out must be writable before anything is uploaded or charged (as captions checks --vtt/--srt): a
 * transcription that ends in "cannot open" after it ran is paid for and its result not saved. Checked
 * without creating or truncating the file: a directory is refused, else the file (when it exists) or
 * its folder must be writable.
 */
function checkWritable(path: string): void {
  const refuse = (why: string): never => {
    throw new CliUsageError(`cannot write --out ${path}: ${why}`);
  };
  const target = statSync(path, { throwIfNoEntry: false });
  if (target?.isDirectory() === true) refuse('it is a directory; give a file path');
  const probe = target !== undefined ? path : dirname(resolve(path));
  const folder = target !== undefined ? undefined : statSync(probe, { throwIfNoEntry: false });
  if (target === undefined && folder === undefined) refuse(`the folder ${probe} does not exist`);
  if (folder !== undefined && !folder.isDirectory()) refuse(`${probe} is not a folder`);
  try {
    accessSync(probe, constants.W_OK);
  } catch (caught) {
    refuse((caught as NodeJS.ErrnoException).code === 'EACCES' ? 'permission denied' : (caught as Error).message);
  }
}

/**
 * Downloads a finished task's transcript to the target. Exit code: 0 for COMPLETED, 1 for anything
 * else (a failed task is one note with its code; a task still running says to use wait).
 */
export async function deliver(out: Output, client: SoundClone, task: TranscriptionTask, target: DownloadTarget): Promise<number> {
  if (task.status === 'FAILED') {
    out.note(`transcription ${task.transcriptionId} failed: ${task.error?.errorCode ?? ''} ${task.error?.message ?? ''}`.trim());
    return 1;
  }
  if (task.status !== 'COMPLETED' && task.status !== 'PARTIAL') {
    out.note(`transcription ${task.transcriptionId} is ${task.status}, not finished yet: run soundclone transcripts wait ${task.transcriptionId}`);
    return 1;
  }
  const body = await client.downloads.get(task.transcriptionId, target.format);
  const bytes = typeof body === 'string' ? body : body instanceof Uint8Array ? body : `${toJson(body)}\n`;
  if (target.outPath !== undefined) {
    await writeFile(target.outPath, bytes);
    out.note(`wrote ${target.format} to ${target.outPath}`);
  } else {
    out.stdout.write(typeof bytes === 'string' && !bytes.endsWith('\n') ? `${bytes}\n` : bytes);
  }
  return task.status === 'COMPLETED' ? 0 : 1;
}

/** Milliseconds between status lines while the status stays the same, without a terminal. */
const HEARTBEAT_MS = 5_000;

/**
 * Status changes as they happen (transcriptions.watch), each with the time since the wait began: on a
 * terminal one line ticking in place, otherwise one line per change plus one every five seconds while
 * the status holds, so a log shows the job is alive. The task carries no progress figure (see the
 * TranscriptionTask type), so elapsed time is all there is to show.
 */
export async function follow(out: Output, client: SoundClone, task: TranscriptionTask): Promise<TranscriptionTask> {
  const tty = out.stderr.isTTY === true;
  const started = Date.now();
  let status = task.status;
  const line = (): string => `status ${status}, ${((Date.now() - started) / 1000).toFixed(1)} s elapsed`;
  const draw = (): void => void out.stderr.write(`\r\x1b[2K${line()}`);
  const ticker = setInterval(() => (tty ? draw() : out.note(line())), tty ? 200 : HEARTBEAT_MS);
  try {
    let last = task;
    for await (const t of client.stt.transcriptions.watch(task.transcriptionId)) {
      last = t;
      status = t.status;
      if (tty) draw();
      else {
        out.note(line());
        ticker.refresh();
      }
    }
    return last;
  } finally {
    clearInterval(ticker);
    if (tty) out.stderr.write('\n');
  }
}
