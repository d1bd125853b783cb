import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningServer } from '@soundclone/server';
import { BUNDLED_SAMPLE } from '@soundclone/node-mic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebVTTParser } from 'webvtt-parser';
import SrtParser from 'srt-parser-2';
import { cli } from './support/cli.js';
import { startCliServer, type CliServer } from './support/cli-server.js';

const KEY = 'key-cli-caption-files';
const words = (t: string): string[] => t.split(/\s+/u).filter((w) => w !== '');

/** `soundclone captions --vtt/--srt/--hls`: caption files written while the session runs. */
describe('soundclone captions caption files', () => {
  let setup: CliServer | undefined;
  let server: RunningServer;
  let dir: string;
  beforeAll(async () => {
    setup = await startCliServer(KEY, 'cli-caption-files-');
    ({ server, dir } = setup);
  }, 120_000);
  afterAll(() => setup?.close());

  it('--vtt, --srt and --hls hold the session lines\' words; both files parse and agree', async () => {
    const vtt = join(dir, 'out.vtt');
    const srt = join(dir, 'out.srt');
    const hls = join(dir, 'hls');
    const run = await cli(['captions', BUNDLED_SAMPLE.path, '--pace', 'fast', '--json', '--vtt', vtt, '--srt', srt, '--hls', hls, '--base-url', server.url, '--access-key', KEY], {}, 60_000);
    expect(run.code, run.stderr).toBe(0);
    const records = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const lineWords = records.filter((r) => r['type'] === 'line').flatMap((r) => words(String(r['text'])));
    expect(lineWords.length).toBeGreaterThan(10);
    const v = new WebVTTParser().parse(readFileSync(vtt, 'utf8'));
    expect(v.errors).toEqual([]);
    const s = new SrtParser().fromSrt(readFileSync(srt, 'utf8'));
    expect(v.cues.flatMap((c) => words(c.text))).toEqual(lineWords);
    expect(s.flatMap((c) => words(c.text))).toEqual(lineWords);
    const ms = (x: number): number => Math.round(x * 1000);
    expect(s.map((c) => [ms(c.startSeconds), ms(c.endSeconds)])).toEqual(v.cues.map((c) => [ms(c.startTime), ms(c.endTime)]));
    const playlist = readFileSync(join(hls, 'captions.m3u8'), 'utf8');
    expect(playlist).toMatch(/^#EXTM3U\n[\s\S]*#EXT-X-ENDLIST\n$/u);
    const segments = [...playlist.matchAll(/^(captions_\d{5}\.vtt)$/gmu)].map((m) => m[1] as string);
    expect(segments.length).toBeGreaterThan(0);
    for (const name of segments) expect(existsSync(join(hls, name))).toBe(true);
    expect(readdirSync(hls).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  }, 90_000);

  it('a caption file that cannot be written is a usage error before any session', async () => {
    const run = await cli(['captions', BUNDLED_SAMPLE.path, '--vtt', join(dir, 'missing', 'x.vtt'), '--base-url', server.url, '--access-key', KEY], {}, 20_000);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('cannot write --vtt');
    expect(run.stderr).not.toContain('session rs_');
  }, 30_000);
});
