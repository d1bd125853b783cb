/** Test audio made in code: tones and silences as 16-bit PCM WAV, so tests need nothing external. */
export type Piece = { readonly tone: number; readonly ms: number; readonly amp?: number } | { readonly silence: number };

export function pcm(pieces: readonly Piece[], sampleRate = 16_000): Float32Array {
  const total = pieces.reduce((n, p) => n + Math.round((('silence' in p ? p.silence : p.ms) * sampleRate) / 1000), 0);
  const out = new Float32Array(total);
  let at = 0;
  for (const p of pieces) {
    const n = Math.round((('silence' in p ? p.silence : p.ms) * sampleRate) / 1000);
    if (!('silence' in p)) {
      const amp = p.amp ?? 0.5;
      for (let i = 0; i < n; i++) out[at + i] = amp * Math.sin((2 * Math.PI * p.tone * i) / sampleRate);
    }
    at += n;
  }
  return out;
}

export function wav(channels: readonly Float32Array[], sampleRate = 16_000): Buffer {
  const frames = channels[0]?.length ?? 0;
  const data = Buffer.alloc(frames * channels.length * 2);
  for (let i = 0; i < frames; i++) {
    channels.forEach((c, ch) => {
      const v = Math.max(-1, Math.min(1, c[i] ?? 0));
      data.writeInt16LE(Math.round(v * 32767), (i * channels.length + ch) * 2);
    });
  }
  return Buffer.concat([wavHeader({ sampleRate, channels: channels.length, bits: 16, dataBytes: data.length }), data]);
}

/**
 * A 44-byte PCM WAV header. `declaredDataBytes` lets a test declare a data chunk other than what follows
 * (the RIFF size still counts the real `dataBytes`).
 */
export function wavHeader(f: { sampleRate: number; channels: number; bits: number; dataBytes: number; declaredDataBytes?: number }): Buffer {
  const blockAlign = (f.channels * f.bits) / 8;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + f.dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(f.channels, 22);
  header.writeUInt32LE(f.sampleRate, 24);
  header.writeUInt32LE(f.sampleRate * blockAlign, 28);
  header.writeUInt16LE(blockAlign, 32);
  header.writeUInt16LE(f.bits, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(f.declaredDataBytes ?? f.dataBytes, 40);
  return header;
}

/** Three "words" in two segments: 300 ms tones separated by short gaps, then a long silence. */
export const SPEECH: readonly Piece[] = [
  { silence: 200 }, { tone: 220, ms: 300 }, { silence: 100 }, { tone: 660, ms: 400 }, { silence: 800 },
  { tone: 440, ms: 500 }, { silence: 300 },
];

export function speechWav(sampleRate = 16_000): Buffer {
  return wav([pcm(SPEECH, sampleRate)], sampleRate);
}

export function toPcm16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = Math.round(Math.max(-1, Math.min(1, samples[i] as number)) * 32767);
  return out;
}
