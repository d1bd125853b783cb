import { fileURLToPath } from 'node:url';

/**
 * The bundled speech sample: LibriVox, "Sense and Sensibility" ch. 1 (public domain), as shipped in
 * Debian's pocketsphinx-testdata; 16 kHz mono 16-bit. samples/README.md has its source and text.
 */
export const BUNDLED_SAMPLE = {
  path: fileURLToPath(new URL('../samples/sense-and-sensibility.wav', import.meta.url)),
  text:
    'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them ' +
    'he was not an ill disposed young man ' +
    'unless to be rather cold hearted and rather selfish is to be ill disposed',
} as const;
