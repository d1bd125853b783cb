import { isSupportedRate, SUPPORTED_RATES } from '@soundclone/core';
import { AudioSourceError } from '../errors.js';

/**
 * What every source (microphone, WAV file, raw PCM, stdin) gives a realtime session: interleaved
 * blocks in one encoding at one rate, known before the first block so the session can be opened at
 * the source's native rate (the core encode path resamples once, nowhere else).
 */
export interface AudioFormat {
  /** Native rate of the blocks, one of the core's supported rates. */
  readonly sampleRate: number;
  /** Interleaved channels; the core averages them to mono. */
  readonly channels: number;
  /** Int16Array blocks (sent bit for bit when 16 kHz mono) or Float32Array blocks in [-1, 1]. */
  readonly encoding: 'pcm16' | 'float32';
}

export type AudioBlock = Int16Array | Float32Array;

export interface AudioSource extends AsyncIterable<AudioBlock> {
  readonly format: AudioFormat;
  /** What the source is, for messages: a path, "stdin", or the device's name. */
  readonly label: string;
  /** Frames (samples per channel) handed out so far; exact, the count finish() reports. */
  readonly deliveredFrames: number;
  /** Whether blocks arrive on their own clock (a microphone) or as fast as they are read (a file). */
  readonly live: boolean;
  /**
   * Ends the source: a microphone stops capturing, a file stops reading. Iteration ends after the
   * blocks already captured; deliveredFrames is then final. Safe to call more than once.
   */
  stop(): Promise<void>;
}

export function checkFormat(format: AudioFormat, what: string): AudioFormat {
  if (!isSupportedRate(format.sampleRate)) {
    throw new AudioSourceError('SOURCE_UNSUPPORTED_FORMAT', `${what}: sample rate ${String(format.sampleRate)} Hz is not supported; use one of ${SUPPORTED_RATES.join(', ')}`);
  }
  if (!Number.isInteger(format.channels) || format.channels < 1 || format.channels > 32) {
    throw new AudioSourceError('SOURCE_UNSUPPORTED_FORMAT', `${what}: ${String(format.channels)} channels; 1 to 32 are supported`);
  }
  return format;
}

/** True when blocks can go to the socket untouched (writePcm16): 16 kHz mono PCM16. */
export function isWireFormat(format: AudioFormat): boolean {
  return format.encoding === 'pcm16' && format.sampleRate === 16_000 && format.channels === 1;
}
