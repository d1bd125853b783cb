/**
 * Test audio made in code: tones and silences as 16-bit PCM WAV, plus minimal mp3 and m4a headers
 * (voice samples are checked by content, spec "POST /voices/tts").
 */
export type Piece = { readonly tone: number; readonly ms: number } | { readonly silence: number };

/** Three "words" in two segments, as the reference recogniser hears them. */
export const SPEECH: readonly Piece[] = [
  { silence: 200 }, { tone: 220, ms: 300 }, { silence: 100 }, { tone: 660, ms: 400 }, { silence: 800 }, { tone: 440, ms: 500 }, { silence: 300 },
];

export function wav(pieces: readonly Piece[] = SPEECH, sampleRate = 16_000, channels = 1): Uint8Array {
  const counts = pieces.map((p) => Math.round((('silence' in p ? p.silence : p.ms) * sampleRate) / 1000));
  const frames = counts.reduce((a, b) => a + b, 0);
  const out = new Uint8Array(44 + frames * channels * 2);
  const view = new DataView(out.buffer);
  const text = (offset: number, s: string): void => {
    for (let i = 0; i < s.length; i++) out[offset + i] = s.charCodeAt(i);
  };
  text(0, 'RIFF');
  view.setUint32(4, 36 + frames * channels * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channels * 2, true);
  view.setUint16(32, channels * 2, true);
  view.setUint16(34, 16, true);
  text(36, 'data');
  view.setUint32(40, frames * channels * 2, true);
  let frame = 0;
  pieces.forEach((p, k) => {
    for (let i = 0; i < (counts[k] as number); i++, frame++) {
      const v = 'silence' in p ? 0 : 0.5 * Math.sin((2 * Math.PI * p.tone * i) / sampleRate);
      for (let ch = 0; ch < channels; ch++) view.setInt16(44 + (frame * channels + ch) * 2, Math.round(v * 32767), true);
    }
  });
  return out;
}

/** An ID3-tagged "mp3": enough for the content check. */
export function mp3(size = 2048): Uint8Array {
  const out = new Uint8Array(size);
  out.set([0x49, 0x44, 0x33, 0x04, 0x00], 0);
  return out;
}

/** An MPEG frame-sync "mp3" without a tag. */
export function mp3FrameSync(size = 2048): Uint8Array {
  const out = new Uint8Array(size);
  out.set([0xff, 0xfb, 0x90, 0x64], 0);
  return out;
}

/** An ISO BMFF ftyp box with the M4A brand. */
export function m4a(size = 2048): Uint8Array {
  const out = new Uint8Array(size);
  out.set([0, 0, 0, 0x20, 0x66, 0x74, 0x79, 0x70, 0x4d, 0x34, 0x41, 0x20], 0);
  return out;
}
