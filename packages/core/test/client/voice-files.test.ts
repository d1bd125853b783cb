import { describe, expect, it } from 'vitest';
import { sniffVoiceFile } from '../../src/client/voices/sniff.js';
import { loadVoiceFiles } from '../../src/client/voices/voice-files.js';
import { ValidationError } from '../../src/errors/client-errors.js';

const bytes = (...values: number[]): Uint8Array => new Uint8Array([...values, ...new Array(16).fill(0)]);
const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

describe('voice sample checks', () => {
  it('sniffs wav, mp3 (ID3 and frame sync) and m4a by content', () => {
    expect(sniffVoiceFile(bytes(...ascii('RIFF'), 0, 0, 0, 0, ...ascii('WAVE')))).toBe('wav');
    expect(sniffVoiceFile(bytes(...ascii('ID3'), 4))).toBe('mp3');
    expect(sniffVoiceFile(bytes(0xff, 0xfb, 0x90, 0x64))).toBe('mp3');
    expect(sniffVoiceFile(bytes(0, 0, 0, 0x20, ...ascii('ftypM4A ')))).toBe('m4a');
    expect(sniffVoiceFile(bytes(0xff, 0xf9, 0xf0, 0))).toBeUndefined(); // bad bitrate index
    expect(sniffVoiceFile(bytes(0xff, 0xe1, 0x90, 0))).toBeUndefined(); // reserved layer
    expect(sniffVoiceFile(bytes(0, 0, 0, 0x20, ...ascii('ftypqt  ')))).toBeUndefined();
    expect(sniffVoiceFile(bytes(...ascii('OggS')))).toBeUndefined();
    expect(sniffVoiceFile(new Uint8Array(0))).toBeUndefined();
  });

  it('checks a file of exactly 10 MB as fine and one byte more as too large', async () => {
    const limit = 10 * 1024 * 1024;
    const ok = new Uint8Array(limit);
    ok.set(ascii('ID3'));
    expect(await loadVoiceFiles('n', [ok])).toHaveLength(1);
    const over = new Uint8Array(limit + 1);
    over.set(ascii('ID3'));
    await expect(loadVoiceFiles('n', [over])).rejects.toBeInstanceOf(ValidationError);
  });

  it('names each file, keeping File names and giving bytes a typed default', async () => {
    const mp3 = bytes(...ascii('ID3'));
    const files = await loadVoiceFiles('n', [mp3, new File([mp3 as Uint8Array<ArrayBuffer>], 'mine.mp3'), { data: mp3, filename: 'chosen.bin' }]);
    expect(files.map((f) => f.filename)).toEqual(['sample-1.mp3', 'mine.mp3', 'chosen.bin']);
    expect(files[0]?.blob.type).toBe('audio/mpeg');
  });

  it('refuses things that are not files', async () => {
    const error = await loadVoiceFiles('n', [42 as unknown as Uint8Array]).catch((e: unknown) => e);
    expect((error as ValidationError).violations).toEqual([{ field: 'files[0]', rule: 'must be a file path, bytes, a Blob or a File' }]);
  });
});
