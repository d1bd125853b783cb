import { describe, expect, it } from 'vitest';
import { decoderArgs } from '../../src/recognition/pocketsphinx/decoder-pool.js';
import { loadPocketSphinx, modelPaths, type DecoderHandle } from '../../src/recognition/pocketsphinx/native.js';
import { CLIP_0930, readClip } from './support.js';

/**
 * The C binding's own contract (native/pocketsphinx-addon.c), below the pool: loads on this thread
 * and on a worker thread give the same decoder, a failed load says why in pocketsphinx's words, and
 * every misuse is a typed exception rather than a silent undefined.
 */
const { binding, model } = loadPocketSphinx();

function words(handle: DecoderHandle, pcm: Int16Array): string {
  for (let at = 0; at < pcm.length; at += 320) binding.process(handle, pcm.subarray(at, at + 320));
  return binding.endUtterance(handle).map(([word]) => word).join(' ');
}

describe('PocketSphinx binding', () => {
  it('loads on a worker thread the same decoder as on this one', async () => {
    const clip = readClip(CLIP_0930.path);
    const args = decoderArgs(model);
    const here = binding.create(args);
    const there = await binding.createAsync(args);
    try {
      const heard = words(here, clip);
      expect(heard).toContain('amiable');
      expect(words(there, clip)).toBe(heard);
    } finally {
      binding.free(here);
      binding.free(there);
    }
  });

  it('says why a load failed, in pocketsphinx words, on either thread', async () => {
    const broken = decoderArgs({ ...modelPaths(), dict: '/nonexistent/cmudict.dict' });
    expect(() => binding.create(broken)).toThrow(expect.objectContaining({ code: 'POCKETSPHINX_INIT', message: expect.stringContaining("Failed to open dictionary file '/nonexistent/cmudict.dict'") }));
    await expect(binding.createAsync(broken)).rejects.toMatchObject({ code: 'POCKETSPHINX_INIT', message: expect.stringContaining('/nonexistent/cmudict.dict') });
    expect(() => binding.create([1 as unknown as string])).toThrow(expect.objectContaining({ code: 'POCKETSPHINX_ARGS' }));
    expect(() => binding.createAsync([1 as unknown as string])).toThrow(expect.objectContaining({ code: 'POCKETSPHINX_ARGS' }));
  });

  it('throws typed errors for missing or wrong arguments and for a freed decoder', () => {
    const call = binding as unknown as Record<string, (...args: unknown[]) => unknown>;
    for (const name of ['reset', 'hypothesis', 'endUtterance', 'free']) expect(() => call[name]!()).toThrow(expect.objectContaining({ code: 'POCKETSPHINX_HANDLE' }));
    expect(() => call['process']!()).toThrow(expect.objectContaining({ code: 'POCKETSPHINX_HANDLE' }));
    const handle = binding.create(decoderArgs(model));
    expect(() => call['process']!(handle)).toThrow(expect.objectContaining({ code: 'POCKETSPHINX_SAMPLES' }));
    expect(() => binding.process(handle, new Float32Array(4) as unknown as Int16Array)).toThrow(expect.objectContaining({ code: 'POCKETSPHINX_SAMPLES' }));
    binding.free(handle);
    binding.free(handle);
    expect(() => binding.process(handle, new Int16Array(320))).toThrow(expect.objectContaining({ code: 'POCKETSPHINX_FREED' }));
    expect(() => binding.endUtterance(handle)).toThrow(expect.objectContaining({ code: 'POCKETSPHINX_FREED' }));
  });
});
