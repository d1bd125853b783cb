import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FrameEncoder } from '@soundclone/core';
import { decodeFrameHeader } from '@soundclone/core/internal';

/**
 * The READMEs' encode-only examples (FrameEncoder, the path session.write() runs) run as written: the
 * code block is taken from the file, its import dropped, and run with the placeholders it names bound
 * to a second of 48 kHz audio and a send() that records what it is given.
 */
const root = resolve(import.meta.dirname, '../..');

function encodeBlock(file: string): string {
  const text = readFileSync(resolve(root, file), 'utf8');
  const block = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((code) => code.includes('new FrameEncoder('));
  if (block === undefined) throw new Error(`${file} shows no FrameEncoder example`);
  return block.split('\n').filter((line) => !line.startsWith('import ')).join('\n');
}

function run(file: string): Uint8Array[] {
  const sent: Uint8Array[] = [];
  const audio = Float32Array.from({ length: 48_000 }, (_, i) => 0.5 * Math.sin((2 * Math.PI * 440 * i) / 48_000));
  const body = `${encodeBlock(file)}\nreturn typeof frames === 'undefined' ? undefined : frames;`;
  const example = new Function('FrameEncoder', 'float32Block', 'block', 'send', body) as (...args: unknown[]) => Uint8Array[] | undefined;
  const kept = example(FrameEncoder, audio, audio, (bytes: Uint8Array) => sent.push(bytes.slice()));
  return kept ?? sent;
}

describe('README encode examples', () => {
  for (const file of ['README.md', 'packages/core/README.md']) {
    it(`${file}: socket-ready 20 ms frames from the first sample on`, () => {
      const frames = run(file);
      expect(frames.length).toBeGreaterThanOrEqual(49);
      frames.forEach((bytes, i) => {
        const head = decodeFrameHeader(new DataView(bytes.buffer, bytes.byteOffset), 0, bytes.length);
        expect(head).toMatchObject({ ok: true, epoch: 1, startSample: i * 320 });
      });
    });
  }
});
