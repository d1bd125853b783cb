import { protocol } from '@soundclone/core/internal';
import { describe, expect, it } from 'vitest';
import { defaultTitle } from '../src/session-title.js';

describe('defaultTitle', () => {
  it('names the source, not its path: an installed package puts the bundled sample deep in a cache', () => {
    const deep = `/home/me/.cache/pnpm/dlx/${'f'.repeat(64)}/node_modules/.pnpm/${'x'.repeat(200)}/node_modules/@soundclone/node-mic/samples/talk.wav`;
    expect(defaultTitle(deep)).toBe('soundclone captions talk.wav');
    expect(defaultTitle('sample')).toBe('soundclone captions sample');
    expect(defaultTitle('microphone')).toBe('soundclone captions microphone');
    expect(defaultTitle('-')).toBe('soundclone captions stdin');
  });

  it('cuts a name still over the limit at the limit, by characters, never inside one', () => {
    const long = defaultTitle(`/tmp/${'é'.repeat(300)}.wav`);
    expect(Array.from(long)).toHaveLength(protocol.LIMITS.titleMaxChars);
    const emoji = defaultTitle(`${'🎙'.repeat(300)}.wav`);
    expect(Array.from(emoji)).toHaveLength(protocol.LIMITS.titleMaxChars);
    expect(emoji.endsWith('🎙')).toBe(true);
  });
});
