import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { EnergyVoiceDetector, type VoiceDetector } from '@soundclone/core/internal';

/**
 * The engines compared behind the same `VoiceDetector` interface the gate runs.
 *
 * WebRTC's VAD is `@echogarden/fvad-wasm` 0.2.0 (libfvad, BSD-3-Clause): its 20.5 kB `fvad.wasm` is
 * compiled and instantiated synchronously here from its bytes (`new WebAssembly.Module` +
 * `new WebAssembly.Instance`, the two imports supplied by hand) rather than through the package's
 * emscripten loader, which is async and fetches the file next to its script. libfvad takes 10, 20 or
 * 30 ms frames of PCM16 at 8, 16, 32 or 48 kHz only (it works at 8 kHz inside); modes 0-3 trade
 * misses for false alarms (3 = most aggressive at calling noise non-speech).
 */
export interface Engine {
  readonly id: string;
  readonly make: (sampleRate: number) => VoiceDetector;
}

/** The part of the WebAssembly API used here (the bench compiles without the DOM types that declare it). */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const { WebAssembly } = globalThis as unknown as { WebAssembly: Wasm };

interface FvadExports {
  readonly c: { buffer: ArrayBuffer };
  readonly d: () => void;
  readonly e: () => number;
  readonly f: (bytes: number) => number;
  readonly g: (inst: number) => void;
  readonly j: (inst: number, mode: number) => number;
  readonly k: (inst: number, rate: number) => number;
  readonly l: (inst: number, frame: number, length: number) => number;
}

let fvadModule: object | null = null;

export function fvadWasmPath(): string {
  return createRequire(import.meta.url).resolve('@echogarden/fvad-wasm/fvad.wasm');
}

/** One libfvad instance on 10 ms frames; float samples are quantized to PCM16 into its memory. */
export class FvadDetector implements VoiceDetector {
  readonly frameLength: number;
  readonly #exports: FvadExports;
  readonly #instance: number;
  readonly #frame: number;
  readonly #heap: Int16Array;
  readonly #mode: number;
  readonly #rate: number;

  constructor(sampleRate: number, mode: number) {
    if (![8000, 16000, 32000, 48000].includes(sampleRate)) throw new Error(`libfvad takes 8, 16, 32 or 48 kHz, not ${sampleRate}`);
    fvadModule ??= new WebAssembly.Module(readFileSync(fvadWasmPath()));
    const imports = {
      a: {
        a: () => { throw new Error('libfvad assertion failed'); },
        b: () => 0, // emscripten_resize_heap: the memory never grows here
      },
    };
    const instance = new WebAssembly.Instance(fvadModule, imports);
    this.#exports = instance.exports as unknown as FvadExports;
    this.#exports.d();
    this.frameLength = sampleRate / 100;
    this.#instance = this.#exports.e();
    this.#frame = this.#exports.f(this.frameLength * 2);
    this.#heap = new Int16Array(this.#exports.c.buffer, this.#frame, this.frameLength);
    this.#mode = mode;
    this.#rate = sampleRate;
    this.reset();
  }

  reset(): void {
    this.#exports.g(this.#instance);
    if (this.#exports.j(this.#instance, this.#mode) !== 0 || this.#exports.k(this.#instance, this.#rate) !== 0) throw new Error('libfvad refused its settings');
  }

  isSpeech(frame: Float32Array): boolean {
    const heap = this.#heap;
    for (let i = 0; i < this.frameLength; i++) {
      const v = frame[i] * 32768;
      heap[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : Math.round(v);
    }
    return this.#exports.l(this.#instance, this.#frame, this.frameLength) === 1;
  }
}

export const ENGINES: readonly Engine[] = [
  { id: 'energy (ours)', make: (rate) => new EnergyVoiceDetector(rate) },
  ...[0, 1, 2, 3].map((mode): Engine => ({ id: `webrtc fvad mode ${mode}`, make: (rate) => new FvadDetector(rate, mode) })),
];
