/**
 * The AudioWorklet module: its own build artifact (dist/capture-worklet.js, one self-contained file,
 * exported as `@soundclone/web-audio/worklet`; its text as `@soundclone/web-audio/worklet-source` for
 * a Blob URL). It registers the capture processor under PROCESSOR_NAME. No eval, no imports at run
 * time, so it loads under a strict Content-Security-Policy from a URL the app serves.
 */
import { defineCaptureProcessor, type ProcessorBaseConstructor } from './capture-processor.js';
import { PROCESSOR_NAME } from './protocol.js';

// AudioWorkletGlobalScope is not in TypeScript's DOM lib; these are the two names this module uses.
declare const AudioWorkletProcessor: ProcessorBaseConstructor;
declare function registerProcessor(name: string, processor: unknown): void;

try {
  registerProcessor(PROCESSOR_NAME, defineCaptureProcessor(AudioWorkletProcessor));
} catch {
  // Already registered in this AudioContext (the module was added twice under two URLs): the first
  // registration is the same code, so there is nothing to do.
}
