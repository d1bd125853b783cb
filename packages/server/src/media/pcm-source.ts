/**
 * Interleaved integer or float PCM kept as the bytes it arrived in, read as Float32 a range at a time.
 * An upload holds one of these per track instead of decoded Float32 channels: 16-bit audio stays at 2
 * bytes a sample (Float32 would double it, per channel), and nothing is expanded until a transcription
 * reads it, block by block (recognizer-feed.ts).
 *
 * `scale` keeps each container's established conversion: WAV divides negative and positive values by
 * 2^(n-1) and 2^(n-1)-1 (wav-decoder's convention, which the deterministic transcripts were made with), Matroska and raw PCM16
 * by 2^(n-1) on both sides.
 */
export type PcmEncoding = 'u8' | 's16le' | 's16be' | 's24le' | 's24be' | 's32le' | 's32be' | 'f32le' | 'f64le';
export type PcmScale = 'wav' | 'symmetric';

export const BYTES_PER_SAMPLE: Readonly<Record<PcmEncoding, number>> = {
  u8: 1, s16le: 2, s16be: 2, s24le: 3, s24be: 3, s32le: 4, s32be: 4, f32le: 4, f64le: 8,
};

type Reader = (view: DataView, at: number) => number;

function reader(encoding: PcmEncoding, scale: PcmScale): Reader {
  const wav = scale === 'wav';
  const int = (v: number, bits: number): number => (wav && v >= 0 ? v / (2 ** (bits - 1) - 1) : v / 2 ** (bits - 1));
  switch (encoding) {
    case 'u8': return (d, at) => int(d.getUint8(at) - 128, 8);
    case 's16le': return (d, at) => int(d.getInt16(at, true), 16);
    case 's16be': return (d, at) => int(d.getInt16(at, false), 16);
    case 's24le': return (d, at) => int(d.getInt8(at + 2) * 65536 + d.getUint8(at + 1) * 256 + d.getUint8(at), 24);
    case 's24be': return (d, at) => int(d.getInt8(at) * 65536 + d.getUint8(at + 1) * 256 + d.getUint8(at + 2), 24);
    case 's32le': return (d, at) => int(d.getInt32(at, true), 32);
    case 's32be': return (d, at) => int(d.getInt32(at, false), 32);
    case 'f32le': return (d, at) => d.getFloat32(at, true);
    case 'f64le': return (d, at) => d.getFloat64(at, true);
  }
}

/** Typed-array views read the platform's byte order; the fast path below needs it to be little-endian. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export class PcmSource {
  /** Whole frames the bytes hold; a trailing partial frame is not audio. */
  readonly frames: number;
  readonly bytesPerFrame: number;
  private readonly view: DataView;
  private readonly read: Reader;
  private readonly sampleBytes: number;
  /** 16-bit little-endian samples as a typed view, when aligned: the common case, read without DataView calls. */
  private readonly int16: Int16Array | undefined;
  private readonly positiveDivisor: number;

  constructor(
    readonly bytes: Uint8Array,
    readonly encoding: PcmEncoding,
    readonly channels: number,
    readonly sampleRate: number,
    scale: PcmScale,
  ) {
    this.sampleBytes = BYTES_PER_SAMPLE[encoding];
    this.bytesPerFrame = this.sampleBytes * channels;
    this.frames = Math.floor(bytes.length / this.bytesPerFrame);
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.read = reader(encoding, scale);
    const aligned = encoding === 's16le' && LITTLE_ENDIAN && bytes.byteOffset % 2 === 0;
    this.int16 = aligned ? new Int16Array(bytes.buffer, bytes.byteOffset, this.frames * channels) : undefined;
    this.positiveDivisor = scale === 'wav' ? 32767 : 32768;
  }

  get durationMs(): number {
    return Math.round((this.frames * 1000) / this.sampleRate);
  }

  /**
   * Writes frames [start, start + count) of one channel, or of the average of all channels ('mix'),
   * into `out` from index 0; returns how many were written (fewer at the end). The average adds
   * channel/n one channel at a time in Float32, exactly as a mixdown of decoded channels would.
   */
  readInto(start: number, count: number, select: number | 'mix', out: Float32Array): number {
    const n = Math.max(0, Math.min(count, this.frames - start, out.length));
    const { view, read, sampleBytes, bytesPerFrame, channels } = this;
    if (select === 'mix' && channels > 1) {
      for (let i = 0; i < n; i++) {
        const base = (start + i) * bytesPerFrame;
        let acc = 0;
        for (let c = 0; c < channels; c++) acc = Math.fround(acc + Math.fround(read(view, base + c * sampleBytes)) / channels);
        out[i] = acc;
      }
      return n;
    }
    const channel = select === 'mix' ? 0 : select;
    const int16 = this.int16;
    if (int16 !== undefined) {
      const positive = this.positiveDivisor;
      for (let i = 0, at = start * channels + channel; i < n; i++, at += channels) {
        const v = int16[at] as number;
        out[i] = v < 0 ? v / 32768 : v / positive;
      }
      return n;
    }
    const offset = channel * sampleBytes;
    for (let i = 0; i < n; i++) out[i] = read(view, (start + i) * bytesPerFrame + offset);
    return n;
  }
}
