import { createHash } from 'node:crypto';
import { decodeFrameHeader } from '@soundclone/core/internal';
import { redact, REDACTED } from '../redact.js';

/**
 * What an app and the service said to each other, in the order the service heard it: REST exchanges
 * and socket connections, each socket with its frames both ways. Plain JSON (save it with
 * JSON.stringify). Access keys and socket tokens are `[redacted]`; the service's address is `{host}`,
 * filled in with the replay server's own.
 */
export interface Cassette {
  readonly version: 1;
  readonly entries: readonly CassetteEntry[];
}

export type CassetteEntry = HttpEntry | SocketEntry;

export interface HttpEntry {
  readonly kind: 'http';
  readonly method: string;
  /** Path and query, tokens redacted. */
  readonly path: string;
  /** What identifies the body: the JSON itself (canonical: keys sorted), or a digest of other bytes. */
  readonly body: RecordedBody;
  readonly response: { readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: string };
}

export interface SocketEntry {
  readonly kind: 'socket';
  readonly path: string;
  /** The upgrade was refused: the HTTP answer. */
  readonly refused?: { readonly status: number; readonly body: string };
  readonly frames: readonly SocketFrame[];
}

export type RecordedBody = { readonly json: unknown } | { readonly bytes: number; readonly sha256: string } | { readonly none: true };

/**
 * A socket frame. A client's audio frame is kept as its header and a digest (the audio itself is
 * the app's and says nothing more); the service's frames are kept whole, to be sent again.
 */
export type SocketFrame =
  | { readonly from: 'client'; readonly text: string }
  | { readonly from: 'client'; readonly audio: { readonly epoch: number; readonly startSample: string; readonly samples: number; readonly skip: boolean; readonly sha256: string } }
  | { readonly from: 'server'; readonly text: string }
  | { readonly from: 'server'; readonly binary: string }
  | { readonly from: 'server'; readonly close: { readonly code: number; readonly reason: string } };

/** Socket messages left out of a cassette: heartbeats come and go with the clock, not with the app. */
export function isHeartbeat(text: string): boolean {
  return /^\{"type":"p[io]ng"/.test(text);
}

export function recordBody(bytes: Buffer, contentType: string | undefined): RecordedBody {
  if (bytes.length === 0) return { none: true };
  if (contentType?.includes('json') === true) {
    try {
      return { json: sortKeys(JSON.parse(bytes.toString('utf8'))) };
    } catch {
      // Not JSON after all: kept as a digest.
    }
  }
  return { bytes: bytes.length, sha256: sha256(bytes) };
}

export function clientFrame(data: Buffer, isBinary: boolean, secrets: readonly string[]): SocketFrame {
  if (!isBinary) return { from: 'client', text: redact(data.toString('utf8'), secrets) };
  const header = decodeFrameHeader(new DataView(data.buffer, data.byteOffset, data.byteLength), 0, data.byteLength);
  const digest = sha256(data);
  if (!header.ok) return { from: 'client', audio: { epoch: -1, startSample: '-1', samples: data.byteLength, skip: false, sha256: digest } };
  return { from: 'client', audio: { epoch: header.epoch, startSample: String(header.startSample), samples: header.sampleCount, skip: header.skip === true, sha256: digest } };
}

/** Path and query with tokens and keys redacted, query parameters decoded and sorted: two requests for the same thing read the same. */
export function normalizePath(raw: string, secrets: readonly string[]): string {
  const url = new URL(raw, 'http://placeholder');
  const query = [...url.searchParams.entries()].map(([k, v]) => [k, redact(v, secrets)] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return query.length === 0 ? url.pathname : `${url.pathname}?${query.map(([k, v]) => `${k}=${v}`).join('&')}`;
}

/** One line naming a request or frame, for mismatch messages. */
export function describeEntry(entry: CassetteEntry | undefined): string {
  if (entry === undefined) return 'nothing (the cassette ended)';
  if (entry.kind === 'socket') return `socket ${entry.path}`;
  return `${entry.method} ${entry.path} ${describeBody(entry.body)}`;
}

export function describeBody(body: RecordedBody): string {
  if ('none' in body) return '(no body)';
  if ('json' in body) return JSON.stringify(body.json);
  return `(${body.bytes} bytes, sha256 ${body.sha256.slice(0, 12)})`;
}

export function describeFrame(frame: SocketFrame | undefined): string {
  if (frame === undefined) return 'nothing more (the socket ended in the cassette)';
  if ('text' in frame) return `${frame.from} ${frame.text}`;
  if ('audio' in frame) {
    const a = frame.audio;
    return `client ${a.skip ? 'skip' : 'audio'} frame epoch ${a.epoch} from sample ${a.startSample}, ${a.samples} samples (sha256 ${a.sha256.slice(0, 12)})`;
  }
  if ('close' in frame) return `server close ${frame.close.code} ${frame.close.reason}`;
  return `server binary frame (${Buffer.from(frame.binary, 'base64').length} bytes)`;
}

export function sameBody(a: RecordedBody, b: RecordedBody): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function sameFrame(a: SocketFrame, b: SocketFrame): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export { REDACTED };

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
  }
  return value;
}
