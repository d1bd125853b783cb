import { ValidationError } from '../../errors/client-errors.js';
import { buildPath } from '../../http/path.js';
import type { CallOptions, Transport } from '../../http/transport.js';
import { DOWNLOAD_FORMATS, DOWNLOAD_KIND, LIMITS, PATHS, type DownloadFormat } from '../../protocol.js';
import { readNodeFile } from '../../util/node-file.js';
import type { DeletedUpload, SegmentedTranscript, Upload } from '../../types/media.js';
import type { TranscriptionTask } from '../../types/transcription.js';
import { object } from '../../util/read.js';
import { parseDeletedUpload, parseUpload } from '../../parse/media.js';
import { parseTask } from '../../parse/transcription.js';
import { checkCallOptions } from '../../http/call-options.js';
import { Checks, requireParams } from '../validation/checks.js';

/**
 * contentType travels as a header and filename in the query: a wrong type would be sent as "5", and a
 * line break in the header would fail as a connection error, so both are checked first (before a
 * file is read).
 */
function checkUploadOptions(options: UploadOptions): void {
  const c = new Checks();
  if (options.contentType !== undefined && (typeof options.contentType !== 'string' || !/^[\x21-\x7e][\x20-\x7e]*$/.test(options.contentType))) {
    c.add('contentType', 'must be a media type of visible ASCII characters, e.g. audio/wav');
  }
  c.string('filename', options.filename, 255);
  c.throwIfAny();
  checkCallOptions(options);
}

/** Bytes (a Uint8Array, any other ArrayBuffer view such as an Int16Array of PCM16, an ArrayBuffer), a Blob or File, or (Node) a file path. */
export type UploadSource = Uint8Array | ArrayBufferView | ArrayBuffer | Blob | string;

export interface UploadOptions extends CallOptions {
  /** Content-Type of the media; defaults to the Blob's type, else application/octet-stream. */
  readonly contentType?: string;
  readonly filename?: string;
}

/**
 * Uploads (ours: POST /uploads, raw media as the body, `filename` in the query; at most 100 MiB). Each upload that
 * arrives makes a new upload id, so it is retried only when it cannot have arrived (README "Retries").
 */
export class Uploads {
  constructor(private readonly transport: Transport) {}

  async create(source: UploadSource, options: UploadOptions = {}): Promise<Upload> {
    options = requireParams(options, 'options');
    checkUploadOptions(options);
    let blob: Blob;
    let named: string | undefined;
    if (typeof source === 'string') {
      const file = await readNodeFile(source, LIMITS.uploadMaxBytes, `must be at most ${LIMITS.uploadMaxBytes} bytes`);
      if (!file.ok) throw new ValidationError([{ field: 'source', rule: file.problem }]);
      blob = file.blob;
      named = file.filename;
    } else if (typeof Blob !== 'undefined' && source instanceof Blob) {
      blob = source;
      const name = (source as { name?: unknown }).name;
      named = typeof name === 'string' && name !== '' ? name : undefined;
    } else if (source instanceof Uint8Array || source instanceof ArrayBuffer) {
      blob = new Blob([source as Uint8Array<ArrayBuffer>]);
    } else if (ArrayBuffer.isView(source)) {
      // Any other view (an Int16Array of PCM16 for audio/L16, a DataView): its bytes as they are in memory.
      blob = new Blob([new Uint8Array(source.buffer as ArrayBuffer, source.byteOffset, source.byteLength)]);
    } else {
      throw new ValidationError([{ field: 'source', rule: 'must be a file path, bytes (a Uint8Array or other ArrayBuffer view, an ArrayBuffer) or a Blob' }]);
    }
    if (blob.size > LIMITS.uploadMaxBytes) throw new ValidationError([{ field: 'source', rule: `must be at most ${LIMITS.uploadMaxBytes} bytes` }]);
    const contentType = options.contentType ?? (blob.type !== '' ? blob.type : 'application/octet-stream');
    const filename = options.filename ?? named;
    const { data } = await this.transport.request(
      {
        method: 'POST',
        path: buildPath(PATHS.uploads),
        ...(filename !== undefined ? { query: { filename } } : {}),
        body: blob,
        headers: { 'Content-Type': contentType },
        retry: 'once',
      },
      options,
    );
    return parseUpload(data);
  }

  /**
   * Deletes an upload (ours: DELETE /uploads/{uploadId}) and frees its bytes from the account's storage
   * quota; a task already transcribing it finishes. Retried like any repeatable call: a repeat after a
   * lost answer is NOT_FOUND.
   */
  async delete(uploadId: string, call?: CallOptions): Promise<DeletedUpload> {
    if (typeof uploadId !== 'string' || uploadId === '') throw new ValidationError([{ field: 'uploadId', rule: 'is required' }]);
    const { data } = await this.transport.request({ method: 'DELETE', path: buildPath(PATHS.upload, { uploadId }), retry: 'repeatable' }, call);
    return parseDeletedUpload(data);
  }
}

/** What downloads.get returns per format. */
export interface DownloadResult {
  txt: string;
  srt: string;
  html: string;
  json: TranscriptionTask;
  segmented_json: SegmentedTranscript;
  docx: Uint8Array;
  pdf: Uint8Array;
}

/**
 * Transcript downloads (ours: GET /stt/transcriptions/{id}/download/{format}). Bytes for docx and pdf,
 * text for txt, srt and html, parsed JSON for json (the public task view, decimals as bigint, spec: "The
 * json download is the public transcription view") and segmented_json.
 */
export class Downloads {
  constructor(private readonly transport: Transport) {}

  async get<F extends DownloadFormat>(transcriptionId: string, format: F, call?: CallOptions): Promise<DownloadResult[F]> {
    const problems = [];
    if (typeof transcriptionId !== 'string' || transcriptionId === '') problems.push({ field: 'transcriptionId', rule: 'is required' });
    if (!(DOWNLOAD_FORMATS as readonly string[]).includes(format)) problems.push({ field: 'format', rule: `must be one of ${DOWNLOAD_FORMATS.join(', ')}` });
    if (problems.length > 0) throw new ValidationError(problems);
    const kind = DOWNLOAD_KIND[format];
    const { data } = await this.transport.request(
      { method: 'GET', path: buildPath(PATHS.transcriptionDownload, { transcriptionId, format }), expect: kind, retry: 'repeatable' },
      call,
    );
    if (format === 'json') return parseTask(data, 'body') as DownloadResult[F];
    if (format === 'segmented_json') return object(data, 'body') as unknown as DownloadResult[F];
    return data as DownloadResult[F];
  }
}
