import { EnergyRecognizer } from './energy-recognizer.js';
import { RecognizerError, isRecognizerError } from './errors.js';
import { PocketSphinxRecognizer, type PocketSphinxOptions } from './pocketsphinx/pocketsphinx-recognizer.js';
import type { Recognizer } from './recognizer.js';

/**
 * `auto` uses PocketSphinx when it is installed and otherwise the deterministic recognizer, with a
 * one-line notice; `pocketsphinx` insists (RecognizerError when it cannot run); `deterministic` is the
 * EnergyRecognizer whose exact output tests rely on.
 */
export type RecognizerChoice = 'auto' | 'pocketsphinx' | 'deterministic';
export const RECOGNIZER_CHOICES: readonly RecognizerChoice[] = ['auto', 'pocketsphinx', 'deterministic'];

export interface ChosenRecognizer {
  readonly recognizer: Recognizer;
  /** Set when `auto` fell back: why PocketSphinx is not in use. */
  readonly notice?: string;
  /** Whether the server made it (and so closes it). */
  readonly owned: boolean;
}

export function chooseRecognizer(choice: Recognizer | string | undefined, options: PocketSphinxOptions = {}): ChosenRecognizer {
  if (typeof choice === 'object') return { recognizer: choice, owned: false };
  if (choice === undefined || choice === 'deterministic') return { recognizer: new EnergyRecognizer(), owned: true };
  if (choice === 'pocketsphinx') return { recognizer: new PocketSphinxRecognizer(options), owned: true };
  if (choice === 'auto') {
    try {
      return { recognizer: new PocketSphinxRecognizer(options), owned: true };
    } catch (error) {
      const reason = isRecognizerError(error) ? error.message : `PocketSphinx failed to start (${(error as Error).message})`;
      return { recognizer: new EnergyRecognizer(), owned: true, notice: `recognizer: using the deterministic recognizer, not real speech recognition: ${reason}` };
    }
  }
  throw new RecognizerError('RECOGNIZER_UNKNOWN', `unknown recognizer "${choice}"; use ${RECOGNIZER_CHOICES.join(', ')}`);
}
