import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RecognizerError } from '../errors.js';

/**
 * Finding and loading the PocketSphinx binding (native/pocketsphinx-addon.c) and the Debian model.
 * `npm run setup` builds the binding; when it is missing but the library is installed, the first load
 * builds it (about a second) and later loads reuse the file.
 */

/** What native/pocketsphinx-addon.c exports. A handle is an opaque external owned by one decoder. */
export interface PocketSphinxBinding {
  /** Loads a decoder on this thread (~250 ms, ~90 MB). Throws an Error whose code is POCKETSPHINX_*. */
  create(args: readonly string[]): DecoderHandle;
  /** The same, loaded on a libuv worker thread: the event loop goes on meanwhile. */
  createAsync(args: readonly string[]): Promise<DecoderHandle>;
  reset(handle: DecoderHandle): void;
  /** Batch only: sets cepstral normalisation from the whole recording's speech; false if it had none. */
  primeCmn(handle: DecoderHandle, samples: Int16Array): boolean;
  /** Decodes the samples; true while the decoder's voice activity detector hears speech. */
  process(handle: DecoderHandle, samples: Int16Array): boolean;
  hypothesis(handle: DecoderHandle): string;
  /** Ends the utterance: [word, startMs, endMs, posterior] per segment, fillers included. */
  endUtterance(handle: DecoderHandle): Array<[string, number, number, number]>;
  free(handle: DecoderHandle): void;
}

declare const decoderHandle: unique symbol;
export type DecoderHandle = { readonly [decoderHandle]: true };

/** Where Debian's pocketsphinx-en-us puts the US English model. */
export const DEBIAN_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

export interface ModelPaths {
  readonly hmm: string;
  readonly lm: string;
  readonly dict: string;
}

export function modelPaths(modelDir: string = DEBIAN_MODEL_DIR): ModelPaths {
  return { hmm: join(modelDir, 'en-us'), lm: join(modelDir, 'en-us.lm.bin'), dict: join(modelDir, 'cmudict-en-us.dict') };
}

// src/recognition/pocketsphinx/ and dist/recognition/pocketsphinx/ are both three levels below the package.
const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BINDING_PATH = join(packageRoot, 'native', 'build', 'pocketsphinx.node');
const BUILD_SCRIPT = join(packageRoot, 'scripts', 'build-pocketsphinx.mjs');
const SOURCE = join(packageRoot, 'native', 'pocketsphinx-addon.c');

let cached: PocketSphinxBinding | undefined;

/**
 * The binding and checked model paths, or RecognizerError RECOGNIZER_UNAVAILABLE saying what is
 * missing and how to install it.
 */
export function loadPocketSphinx(modelDir?: string): { binding: PocketSphinxBinding; model: ModelPaths } {
  const model = modelPaths(modelDir);
  const missingModel = missingModelFile(model);
  if (missingModel !== undefined) {
    throw new RecognizerError('RECOGNIZER_UNAVAILABLE', `PocketSphinx model not found (${missingModel}); install the Debian packages pocketsphinx-en-us and libpocketsphinx-dev`);
  }
  if (cached === undefined) {
    if (!existsSync(BINDING_PATH) || stale()) build();
    try {
      cached = createRequire(import.meta.url)(BINDING_PATH) as PocketSphinxBinding;
    } catch (cause) {
      throw new RecognizerError('RECOGNIZER_UNAVAILABLE', `the PocketSphinx binding did not load (${(cause as Error).message.split('\n')[0]}); rebuild it with node packages/server/scripts/build-pocketsphinx.mjs`, { cause });
    }
  }
  return { binding: cached, model };
}

/** The first model file that is not there (a decoder cannot load without it), if any. */
export function missingModelFile(model: ModelPaths): string | undefined {
  return [model.hmm, model.lm, model.dict].find((p) => !existsSync(p));
}

/** The C source changed since the binding was built (a pull without npm run setup). */
function stale(): boolean {
  return existsSync(SOURCE) && statSync(SOURCE).mtimeMs > statSync(BINDING_PATH).mtimeMs;
}

function build(): void {
  try {
    execFileSync(process.execPath, [BUILD_SCRIPT], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  } catch (cause) {
    const stderr = String((cause as { stderr?: unknown }).stderr ?? '').trim().split('\n').pop() ?? '';
    throw new RecognizerError('RECOGNIZER_UNAVAILABLE', stderr !== '' ? stderr : 'building the PocketSphinx binding failed', { cause });
  }
}
