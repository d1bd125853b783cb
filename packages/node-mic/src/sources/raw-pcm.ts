import { closeSync, createReadStream, fstatSync, openSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { AudioSourceError } from '../errors.js';
import { checkFormat, type AudioBlock, type AudioSource } from './audio-source.js';
import { BlockSource, type BlockSourceOptions } from './block-source.js';
import { Pcm16Chunker } from './pcm-chunker.js';
import { arrayBlocks, decodeWav } from './wav.js';

export interface RawPcmOptions extends BlockSourceOptions {
  /** Default 16000. */
  readonly sampleRate?: number;
  /** Interleaved channels. Default 1. */
  readonly channels?: number;
}

/** Headerless PCM16LE from a path or a Readable (a pipe, a socket), streamed as it arrives. */
export function rawPcmSource(input: string | Readable, options: RawPcmOptions = {}): AudioSource {
  const label = typeof input === 'string' ? input : 'raw PCM stream';
  const format = checkFormat({ sampleRate: options.sampleRate ?? 16_000, channels: options.channels ?? 1, encoding: 'pcm16' }, label);
  if (typeof input !== 'string') return new BlockSource(label, format, pcmBlocks(() => input, format.channels, label), options);
  // Opened now, not when the first block is asked for: a missing file or a directory fails here, before
  // any session exists (a stream opened by path reports that as an 'error' event nobody listens to yet).
  const fd = openFile(input);
  let owned = true;
  const release = (): void => {
    if (owned) closeSync(fd);
    owned = false;
  };
  const open = (): Readable => {
    owned = false; // the stream closes it (autoClose), also when the for-await is left early
    return createReadStream('', { fd });
  };
  return new BlockSource(label, format, pcmBlocks(open, format.channels, label), options, release);
}

function openFile(path: string): number {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    if (fstatSync(fd).isDirectory()) throw new AudioSourceError('SOURCE_READ_FAILED', `${path}: is a directory, not a raw PCM file`);
    return fd;
  } catch (caught) {
    if (fd !== undefined) closeSync(fd);
    if (caught instanceof AudioSourceError) throw caught;
    throw new AudioSourceError('SOURCE_READ_FAILED', `${path}: ${caught instanceof Error ? caught.message : String(caught)}`, { cause: caught });
  }
}

async function* pcmBlocks(open: () => Readable, channels: number, label: string): AsyncGenerator<AudioBlock> {
  const chunker = new Pcm16Chunker(channels);
  const stream = open();
  try {
    for await (const chunk of stream) yield chunker.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Uint8Array));
  } catch (caught) {
    throw new AudioSourceError('SOURCE_READ_FAILED', `${label}: ${caught instanceof Error ? caught.message : String(caught)}`, { cause: caught });
  }
  if (chunker.pendingBytes > 0) {
    throw new AudioSourceError('SOURCE_READ_FAILED', `${label}: ends in the middle of a frame (${String(chunker.pendingBytes)} stray bytes)`);
  }
}

export interface StdinOptions extends RawPcmOptions {
  /** `wav`, `raw` (PCM16LE at sampleRate/channels), or `auto`: WAV when the input starts with RIFF. Default auto. */
  readonly type?: 'wav' | 'raw' | 'auto';
  /** Default process.stdin. */
  readonly stream?: Readable;
}

/**
 * process.stdin as a source. Raw PCM streams block by block; a WAV is read whole first (wav-decoder
 * needs the complete file), then paced like a file.
 */
export async function stdinSource(options: StdinOptions = {}): Promise<AudioSource> {
  const stream = options.stream ?? process.stdin;
  const type = options.type ?? 'auto';
  if (type === 'raw') return rawPcmSource(stream, { ...options });
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  const head: Uint8Array[] = [];
  let headBytes = 0;
  let done = false;
  while (headBytes < 4 && !done) {
    const next = await iterator.next();
    if (next.done === true) done = true;
    else {
      head.push(next.value);
      headBytes += next.value.length;
    }
  }
  const first = Buffer.concat(head);
  const isWav = first.subarray(0, 4).toString('latin1') === 'RIFF';
  const rest = async function* (): AsyncGenerator<Uint8Array> {
    yield first;
    if (done) return;
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) yield next.value;
  };
  if (type === 'wav' || isWav) {
    const parts: Uint8Array[] = [];
    for await (const chunk of rest()) parts.push(chunk);
    const wav = decodeWav(Buffer.concat(parts), 'stdin');
    return new BlockSource('stdin', wav.format, arrayBlocks(wav.samples, wav.format), options);
  }
  const { Readable } = await import('node:stream');
  return rawPcmSource(Readable.from(rest()), options);
}
