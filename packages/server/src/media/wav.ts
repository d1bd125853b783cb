import { UndecodableMediaError } from './media-error.js';
import { PcmSource, type PcmEncoding } from './pcm-source.js';

/** Ours: the declared rates accepted in any container (the recogniser path resamples any of them). */
export const RATE_MIN_HZ = 1000;
export const RATE_MAX_HZ = 384_000;
export const CHANNELS_MAX = 32;

export function checkRate(rate: number, what: string): void {
  if (!Number.isFinite(rate) || rate < RATE_MIN_HZ || rate > RATE_MAX_HZ) {
    throw new UndecodableMediaError('RATE_OUT_OF_RANGE', `${what} declares a sampling frequency of ${rate} Hz; the reference service reads ${RATE_MIN_HZ} to ${RATE_MAX_HZ} Hz`, {
      declaredRate: Number.isFinite(rate) ? rate : String(rate), minRate: RATE_MIN_HZ, maxRate: RATE_MAX_HZ,
    });
  }
}

/** Ours: chunks read before `data`; real files have a handful (fmt, fact, LIST, bext, …). */
export const WAV_MAX_CHUNKS = 10_000;

const FORMAT_PCM = 0x0001;
const FORMAT_FLOAT = 0x0003;
const FORMAT_EXTENSIBLE = 0xfffe;

/**
 * Reads a RIFF/WAVE header without decoding a sample: the `fmt ` chunk is checked (integer 8/16/24/32 or
 * float 32/64 bits, 1..32 channels, 1..384 kHz, a block alignment that matches channels × bytes per
 * sample) and the `data` chunk becomes a view of the upload's own bytes. A data size larger than the
 * bytes that follow (streamed WAVs declare 0xFFFFFFFF) counts only the whole frames actually present:
 * the number of samples always comes from the payload, never from a declaration. At most WAV_MAX_CHUNKS
 * chunks are read before `data`.
 */
export function parseWav(bytes: Uint8Array): PcmSource {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 12;
  let format: { tag: number; channels: number; rate: number; blockAlign: number; bits: number } | undefined;
  for (let chunks = 1; at + 8 <= bytes.length; chunks++) {
    if (chunks > WAV_MAX_CHUNKS) {
      throw new UndecodableMediaError('TOO_MANY_ELEMENTS', `WAV has more than ${WAV_MAX_CHUNKS} chunks before its data`, { maxChunks: WAV_MAX_CHUNKS });
    }
    const id = String.fromCharCode(bytes[at] as number, bytes[at + 1] as number, bytes[at + 2] as number, bytes[at + 3] as number);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > bytes.length) throw new UndecodableMediaError('MALFORMED', 'WAV fmt chunk is shorter than 16 bytes');
      let tag = view.getUint16(body, true);
      if (tag === FORMAT_EXTENSIBLE && size >= 26 && body + 26 <= bytes.length) tag = view.getUint16(body + 24, true);
      format = { tag, channels: view.getUint16(body + 2, true), rate: view.getUint32(body + 4, true), blockAlign: view.getUint16(body + 12, true), bits: view.getUint16(body + 14, true) };
    } else if (id === 'data') {
      if (format === undefined) throw new UndecodableMediaError('MALFORMED', 'WAV data chunk comes before its fmt chunk');
      const end = Math.min(bytes.length, body + size);
      return new PcmSource(bytes.subarray(body, end), checkFormat(format), format.channels, format.rate, 'wav');
    }
    // Chunks are padded to an even size.
    at = body + size + (size & 1);
  }
  throw new UndecodableMediaError('MALFORMED', format === undefined ? 'WAV has no fmt chunk' : 'WAV has no data chunk');
}

function checkFormat(f: { tag: number; channels: number; rate: number; blockAlign: number; bits: number }): PcmEncoding {
  const encoding = f.tag === FORMAT_PCM ? INT_ENCODINGS[f.bits] : f.tag === FORMAT_FLOAT ? FLOAT_ENCODINGS[f.bits] : undefined;
  if (encoding === undefined) {
    throw new UndecodableMediaError('UNSUPPORTED_FORMAT', `WAV format 0x${f.tag.toString(16)} with ${f.bits} bits cannot be decoded (integer 8/16/24/32 or float 32/64 bits)`, { formatTag: f.tag, bitsPerSample: f.bits });
  }
  if (f.channels < 1 || f.channels > CHANNELS_MAX) {
    throw new UndecodableMediaError('UNSUPPORTED_FORMAT', `WAV declares ${f.channels} channels; the reference service reads 1 to ${CHANNELS_MAX}`, { channels: f.channels });
  }
  checkRate(f.rate, 'WAV');
  if (f.blockAlign !== f.channels * (f.bits / 8)) {
    throw new UndecodableMediaError('MALFORMED', `WAV block alignment ${f.blockAlign} does not match ${f.channels} channels of ${f.bits} bits`, { blockAlign: f.blockAlign });
  }
  return encoding;
}

const INT_ENCODINGS: Partial<Record<number, PcmEncoding>> = { 8: 'u8', 16: 's16le', 24: 's24le', 32: 's32le' };
const FLOAT_ENCODINGS: Partial<Record<number, PcmEncoding>> = { 32: 'f32le', 64: 'f64le' };
