import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { fvadWasmPath } from './engines.js';

/**
 * What each engine adds to a page: the gate's module with its engine, bundled from core's TypeScript
 * source by esbuild (web-audio's, which builds the worklet with it), minified for the browser, gzip -9.
 * The WebRTC engine's row also holds its wasm as a base64 string and a sync loader, since a CSP-safe
 * package must ship the bytes inside its script (no fetch of a `.wasm` file, no `wasm-unsafe-eval`
 * aside, which any WebAssembly needs).
 */
export interface BundleSize { readonly id: string; readonly minified: number; readonly gzip: number }

interface EsbuildLike { build(options: Record<string, unknown>): Promise<{ outputFiles: { text: string }[] }> }

export async function bundleSizes(): Promise<BundleSize[]> {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = join(here, '..', '..', '..', '..');
  const esbuild = createRequire(join(root, 'packages', 'web-audio', 'package.json'))('esbuild') as EsbuildLike;
  const gate = join(root, 'packages', 'core', 'src', 'dsp', 'voice-gate.ts');
  const dir = mkdtempSync(join(tmpdir(), 'soundclone-vad-bundle-'));
  try {
    const wasm = readFileSync(fvadWasmPath()).toString('base64');
    const entries = {
      'energy (ours): VoiceGate + EnergyVoiceDetector': `export { VoiceGate } from ${JSON.stringify(gate)};`,
      'webrtc fvad: VoiceGate + libfvad wasm (base64) + loader': `export { VoiceGate } from ${JSON.stringify(gate)};
const b = atob(${JSON.stringify(wasm)}); const u = new Uint8Array(b.length); for (let i = 0; i < b.length; i++) u[i] = b.charCodeAt(i);
export class Fvad { constructor(rate, mode) { const e = new WebAssembly.Instance(new WebAssembly.Module(u), { a: { a() { throw new Error('fvad'); }, b() { return 0; } } }).exports;
e.d(); this.e = e; this.frameLength = rate / 100; this.i = e.e(); this.p = e.f(this.frameLength * 2); this.h = new Int16Array(e.c.buffer, this.p, this.frameLength); e.j(this.i, mode); e.k(this.i, rate); }
isSpeech(f) { for (let i = 0; i < this.frameLength; i++) { const v = f[i] * 32768; this.h[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : Math.round(v); } return this.e.l(this.i, this.p, this.frameLength) === 1; }
reset() { this.e.g(this.i); } }`,
    };
    const out: BundleSize[] = [];
    for (const [id, code] of Object.entries(entries)) {
      const file = join(dir, `${out.length}.ts`);
      writeFileSync(file, code);
      const result = await esbuild.build({ entryPoints: [file], bundle: true, minify: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent' });
      const text = result.outputFiles[0]!.text;
      out.push({ id, minified: Buffer.byteLength(text), gzip: gzipSync(text, { level: 9 }).length });
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
