import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { ApiError } from '../errors.js';

/** A received file part: its size and first bytes (enough for content sniffing); the rest is not kept. */
export interface FilePart {
  readonly field: string;
  readonly filename: string;
  readonly mimeType: string;
  readonly size: number;
  readonly head: Buffer;
  /** True when the part was cut at `maxFileBytes + 1` bytes. */
  readonly truncated: boolean;
}

export interface MultipartResult {
  readonly fields: Map<string, string[]>;
  readonly files: FilePart[];
  /** True when more than `maxFiles` files were sent (busboy dropped the rest). */
  readonly tooManyFiles: boolean;
}

/**
 * Parses multipart/form-data with busboy (a well-kept streaming parser; see README). Sizes are counted
 * up to one byte past the limit so the caller can tell "exactly at" from "just past" the limit.
 */
export function parseMultipart(req: IncomingMessage, limits: { maxFileBytes: number; maxFiles: number }): Promise<MultipartResult> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: limits.maxFileBytes + 1, files: limits.maxFiles, fields: 8, fieldSize: 64 * 1024 } });
    } catch (error) {
      req.resume();
      reject(new ApiError('INPUT_INVALID', 'body: must be multipart/form-data', { violations: [{ field: 'body', rule: 'must be multipart/form-data' }] }, { cause: error }));
      return;
    }
    const fields = new Map<string, string[]>();
    const files: FilePart[] = [];
    let tooManyFiles = false;
    let openFiles = 0;
    let parserClosed = false;
    let settled = false;
    const finish = (): void => {
      if (settled || !parserClosed || openFiles !== 0) return;
      settled = true;
      resolve({ fields, files, tooManyFiles });
    };
    // A body that ends early or lacks its closing boundary makes busboy fail the parser and the open
    // file stream; both become one typed refusal, never an unhandled 'error' event.
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      req.resume();
      reject(new ApiError('INPUT_INVALID', 'body: malformed multipart/form-data', { violations: [{ field: 'body', rule: 'must be well-formed multipart/form-data' }] }, { cause: error }));
    };
    parser.on('field', (name, value) => fields.set(name, [...(fields.get(name) ?? []), value]));
    parser.on('file', (field, stream, info) => {
      openFiles++;
      let size = 0;
      const head: Buffer[] = [];
      let headSize = 0;
      stream.on('error', fail);
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (headSize < 64) {
          head.push(chunk.subarray(0, 64 - headSize));
          headSize += Math.min(chunk.length, 64 - headSize);
        }
      });
      stream.on('end', () => {
        files.push({ field, filename: info.filename ?? '', mimeType: info.mimeType, size, head: Buffer.concat(head), truncated: (stream as { truncated?: boolean }).truncated === true });
        openFiles--;
        finish();
      });
    });
    parser.on('filesLimit', () => {
      tooManyFiles = true;
    });
    parser.on('error', fail);
    // A client that resets mid-body: the request never ends, so the parser would wait forever.
    req.on('error', fail);
    req.on('close', () => {
      if (!req.complete) fail(new Error('request closed before its body ended'));
    });
    parser.on('close', () => {
      parserClosed = true;
      finish();
    });
    req.pipe(parser);
  });
}
