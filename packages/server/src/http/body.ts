import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors.js';
import { SERVER_LIMITS } from '../protocol.js';
import { JSON_MAX_DEPTH, jsonTooDeep } from '../util/json-depth.js';
import { HEAVY_BODY_BYTES, heavyTurn } from './heavy-turns.js';

/**
 * Reads a whole request body up to `maxBytes`. Past the limit it stops keeping bytes, discards the rest
 * and fails with PAYLOAD_TOO_LARGE (the router then closes the connection).
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      req.resume();
      reject(tooLarge(maxBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > maxBytes) {
        over = true;
        chunks.length = 0;
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks, size));
    });
    // A client that stops or resets before its declared length: a typed refusal, not an internal error.
    const cut = (error?: unknown): void => {
      chunks.length = 0;
      reject(new ApiError('INPUT_INVALID', 'body: ended before its declared length', { violations: [{ field: 'body', rule: 'must be sent whole' }] }, error === undefined ? undefined : { cause: error }));
    };
    req.on('error', cut);
    req.on('close', () => {
      if (!req.complete) cut();
    });
  });
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `request body is larger than ${maxBytes} bytes`, { maxBytes });
}

/**
 * Reads a JSON body. An empty body is `undefined` (several calls have optional bodies; GET /tts/list
 * takes its parameters in a body or in the query, spec "Placement ... not shown").
 */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const raw = await readBody(req, SERVER_LIMITS.jsonBodyMaxBytes);
  // Parsing costs ~10-30 ms for a 1 MiB body of tiny values: large bodies take turns, and heavy work
  // gets at most half of the event loop (http/heavy-turns.ts).
  const release = raw.length > HEAVY_BODY_BYTES ? await heavyTurn() : undefined;
  try {
    return parseJson(raw);
  } finally {
    release?.();
  }
}

function parseJson(raw: Buffer): unknown {
  const text = raw.toString('utf8').trim();
  if (text === '') return undefined;
  if (jsonTooDeep(text)) {
    const rule = `must not nest objects or arrays more than ${JSON_MAX_DEPTH} levels deep`;
    throw new ApiError('INPUT_INVALID', `body: ${rule}`, { violations: [{ field: 'body', rule }] });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ApiError('INPUT_INVALID', 'body: must be valid JSON', { violations: [{ field: 'body', rule: 'must be valid JSON' }] }, { cause: error });
  }
}

/** Narrows a parsed body to a plain object, or fails with INPUT_INVALID naming `body`. */
export function asObject(value: unknown, field = 'body'): Record<string, unknown> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw ApiError.invalidField(field, 'must be a JSON object');
  }
  return value as Record<string, unknown>;
}
