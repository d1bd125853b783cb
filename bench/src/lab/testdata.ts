import { existsSync, readFileSync } from 'node:fs';

/** pocketsphinx-testdata (a Debian package; `npm run setup` installs it): real recorded speech with known words. */
export const TESTDATA = '/usr/share/pocketsphinx/test/data';

/** The LibriVox clips' ids, in the order of their `fileids` list. */
export function librivoxIds(): string[] {
  return readFileSync(`${TESTDATA}/librivox/fileids`, 'utf8').trim().split('\n');
}

/** One recording, `librivox/<id>` or `cards/<id>`: a 16 kHz mono PCM16 WAV, read past its 44-byte header. */
export function testRecording(name: string): Int16Array {
  const file = `${TESTDATA}/${name}.wav`;
  if (!existsSync(file)) throw new Error(`${file} is missing: install pocketsphinx-testdata (npm run setup does)`);
  const bytes = readFileSync(file).subarray(44);
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + (bytes.byteLength & ~1)));
}

/** `parts` one after another. */
export function joined(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
