import { existsSync } from 'node:fs';
import { checkCreateTranscription, protocol } from '@soundclone/core/internal';
import { parse, str } from '../args.js';
import { CliUsageError } from '../cli-error.js';
import { connect } from '../context.js';
import { checkReadableFile } from '../readable-file.js';
import type { CommandContext } from '../command.js';
import { deliver, downloadTarget, follow } from './transcripts.js';

export const TRANSCRIBE_USAGE = `usage: soundclone transcribe FILE|URL [--wait] [--format ${protocol.DOWNLOAD_FORMATS.join('|')}] [--out PATH]
  FILE is uploaded first; an http(s) URL is fetched by the service. What the service decodes (the
  reference server; see docs/protocol.md "Uploads"): WAV (integer 8/16/24/32-bit or float 32-bit, any
  rate 1-384 kHz, 1-32 channels), headerless PCM16LE 16 kHz mono (audio/L16), Matroska with PCM tracks.
  --wait     follow the task to its end, then download the transcript (--format, default txt)
  --out      write the download there; default stdout (docx and pdf only when stdout is not a terminal)
  --title TEXT --language CODE
Without --wait the transcription id is printed: fetch the result later with
  soundclone transcripts get ID   (or transcripts wait ID)`;

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
  const target = downloadTarget(values, ctx.out);
  const wait = values['wait'] === true || values['format'] !== undefined || target.outPath !== undefined;
  const isUrl = /^https?:\/\//i.test(input);
  // Another scheme (ftp://, s3://, file://) is neither fetched by the service nor a file here: say so
  // rather than "no such file".
  if (!isUrl && /^[a-z][a-z0-9+.-]*:\/\//i.test(input) && !existsSync(input)) {
    throw new CliUsageError(`transcribe takes a FILE or an http(s) URL; ${input.slice(0, input.indexOf(':'))}:// URLs are not fetched (download the file first)`);
  }
  // A file that cannot be read fails here, like a captions source: before any server or upload.
  if (!isUrl) await checkReadableFile(input);
  // So do --title and --language the service would refuse: an upload made before that refusal would
  // only take up the account's storage. The flags are named as the user typed them.
  const titleFlag = str(values, 'title');
  const languageFlag = str(values, 'language');
  const refused = checkCreateTranscription({
    ...(isUrl ? { mediaUrl: input } : { uploadId: 'up_pending' }),
    ...(titleFlag !== undefined ? { title: titleFlag } : {}),
    ...(languageFlag !== undefined ? { languageHint: languageFlag } : {}),
  }).violations;
  const flagOf: Record<string, string> = { title: '--title', languageHint: '--language', mediaUrl: 'URL' };
  if (refused.length > 0) throw new CliUsageError(refused.map((v) => `${flagOf[v.field] ?? v.field} ${v.rule}`).join('; '));
  const connection = await connect(values, ctx.env, ctx.out);
  try {
    const { client } = connection;
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
      if (connection.keepsState) {
        // The local server stops once no command uses it (this one may be the last): the work is finished
        // here, so the kept task has a result for `transcripts get` in a later command instead of being
        // failed as interrupted.
        ctx.out.note(`the local server stops once no command uses it, so the transcription finishes first; then: soundclone transcripts get ${task.transcriptionId}`);
        let status = task.status;
        for await (const done of client.stt.transcriptions.watch(task.transcriptionId)) status = done.status;
        ctx.out.note(`transcription ${task.transcriptionId}: ${status}`);
      } else if (connection.local) ctx.out.note('add --wait to see the result: this transcription ends with this command (--ephemeral)');
      else ctx.out.note(`fetch the result with: soundclone transcripts get ${task.transcriptionId} (or transcripts wait)`);
      return 0;
    }
    return await deliver(ctx.out, client, await follow(ctx.out, client, task), target);
  } finally {
    await connection.close();
  }
}
