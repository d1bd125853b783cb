/**
 * An order-sensitive digest of a PCM16 stream (FNV-1a over each sample's two bytes) with its sample
 * count: the client folds in every sample it writes, the server every sample it stores, and the two must
 * be equal. A lost, repeated or misplaced block changes it; the server keeps 8 bytes instead of the hour.
 */
export class PcmDigest {
  #hash = 0x811c9dc5;
  #samples = 0;

  add(samples: Int16Array): void {
    let h = this.#hash;
    for (let i = 0; i < samples.length; i++) {
      const v = (samples[i] ?? 0) & 0xffff;
      h = Math.imul(h ^ (v & 0xff), 0x01000193);
      h = Math.imul(h ^ (v >>> 8), 0x01000193);
    }
    this.#hash = h;
    this.#samples += samples.length;
  }

  get value(): { readonly samples: number; readonly hash: string } {
    return { samples: this.#samples, hash: (this.#hash >>> 0).toString(16).padStart(8, '0') };
  }
}
