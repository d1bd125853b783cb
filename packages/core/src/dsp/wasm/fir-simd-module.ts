import { FIR_SIMD_BASE64 } from './fir-simd-bytes.js';

/**
 * The compiled FIR kernel module, or null where WebAssembly SIMD cannot run (no WebAssembly, no
 * SIMD support, or a Content-Security-Policy that forbids compiling). Compiled synchronously on
 * first use and shared by every Resampler: the module is far below the 4 KB that browsers compile
 * synchronously on any thread, so this also works inside an AudioWorklet's process().
 */
export function firSimdModule(): WebAssembly.Module | null {
  // Checked on every call (cheap) so a global that disappears, as in tests, is noticed.
  if (typeof WebAssembly !== 'object' || WebAssembly === null) return null;
  if (compiled === undefined) {
    compiled = null;
    try {
      const bytes = decodeBase64(FIR_SIMD_BASE64);
      if (WebAssembly.validate(bytes)) compiled = new WebAssembly.Module(bytes);
    } catch {
      compiled = null; // CompileError under a CSP without 'wasm-unsafe-eval': use the JS kernels.
    }
  }
  return compiled;
}

let compiled: WebAssembly.Module | null | undefined;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Base64 to bytes without atob or Buffer, neither of which an AudioWorkletGlobalScope has. */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const lookup = new Uint8Array(128);
  for (let i = 0; i < ALPHABET.length; i++) lookup[ALPHABET.charCodeAt(i)] = i;
  let length = text.length;
  while (length > 0 && text.charCodeAt(length - 1) === 61 /* = */) length--;
  const out = new Uint8Array((length * 3) >> 2);
  let value = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < length; i++) {
    value = ((value << 6) | lookup[text.charCodeAt(i) & 127]) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (value >> bits) & 0xff;
    }
  }
  return out;
}
