import type { Contender } from './contender.js';
import { LinearResampler } from './linear.js';
import { libSampleRateContender } from './libsamplerate.js';
import { oursContender } from './ours.js';
import { speexContender } from './speex.js';

export { OUTPUT_RATE, outputRoomFor, type Contender, type ContenderFamily, type StreamingResampler } from './contender.js';

const linearContender: Contender = {
  id: 'linear',
  label: 'naive linear (JS)',
  family: 'linear',
  zeroDelay: true,
  create: (inputRate) => Promise.resolve(new LinearResampler(inputRate)),
};

/** Every resampler in the table, ours first (the default kernel, then the pure TypeScript one). */
export function allContenders(): Contender[] {
  return [
    oursContender('best'),
    oursContender('fast'),
    oursContender('best', 'js'),
    oursContender('fast', 'js'),
    speexContender(7),
    speexContender(5),
    libSampleRateContender('SRC_SINC_BEST_QUALITY'),
    libSampleRateContender('SRC_SINC_MEDIUM_QUALITY'),
    libSampleRateContender('SRC_SINC_FASTEST'),
    linearContender,
  ];
}

/** The input rates of the encode-path targets, both to 16 kHz. */
export const INPUT_RATES = [48000, 44100] as const;
