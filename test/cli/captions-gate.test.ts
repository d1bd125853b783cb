import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './support/cli.js';
import { startCliServer, type CliServer } from './support/cli-server.js';

const KEY = 'key-cli-captions-gate';
const RATE = 16_000;

/** A 16 kHz mono PCM16 WAV: three tone bursts (loud) with 4 s of quiet noise around each. */
function speechWithSilence(): Buffer {
  const parts: Array<{ tone?: number; ms: number }> = [];
  for (let i = 0; i < 3; i++) parts.push({ ms: 4000 }, { tone: 300 + 100 * i, ms: 400 }, { ms: 100 }, { tone: 500 + 100 * i, ms: 300 });
  parts.push({ ms: 4000 });
  const samples = parts.reduce((n, p) => n + (p.ms * RATE) / 1000, 0);
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0);
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8);
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(RATE, 24);
  wav.writeUInt32LE(RATE * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36);
  wav.writeUInt32LE(samples * 2, 40);
  let at = 0;
  for (const p of parts) {
    for (let i = 0; i < (p.ms * RATE) / 1000; i++, at++) {
      const noise = ((Math.imul(at + 7919, 2654435761) >>> 16) % 64) - 32;
      const v = p.tone === undefined ? noise : Math.round(0.5 * 32767 * Math.sin((2 * Math.PI * p.tone * i) / RATE)) + noise;
      wav.writeInt16LE(v, 44 + 2 * at);
    }
  }
  return wav;
}

/** `soundclone captions --gate`: silence goes as skipped time; the summary says the share saved. */
describe('soundclone captions --gate', () => {
  let setup: CliServer | undefined;
  let server: RunningServer;
  let dir: string;
  beforeAll(async () => {
    setup = await startCliServer(KEY, 'cli-captions-gate-');
    server = setup.server;
    dir = mkdtempSync(join(tmpdir(), 'soundclone-gate-'));
    writeFileSync(join(dir, 'speech.wav'), speechWithSilence());
  }, 120_000);
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    return setup?.close();
  });

  it('prints the share saved; the whole capture is received, only the audio charged', async () => {
    const file = join(dir, 'speech.wav');
    const run = await cli(['captions', file, '--pace', 'fast', '--gate', '--base-url', server.url, '--access-key', KEY], {}, 60_000);
    expect(run.code, run.stderr).toBe(0);
    const saved = /gate: saved ([\d.]+) % \(([\d.]+) s of silence not sent, not charged\)/u.exec(run.stdout);
    expect(saved, run.stdout).not.toBeNull();
    // 16 s of quiet, 2.4 s of bursts: all but each burst's pre-roll and hangover is saved.
    expect(Number(saved![1])).toBeGreaterThan(60);
    expect(Number(saved![1])).toBeLessThan(90);
    const total = 18.4;
    expect(run.stdout).toContain(`usage: ${String(total * RATE)} samples received, ${String(total * RATE)} captured`);
    const charged = Number(/charge: (\d+) characters/u.exec(run.stdout)![1]);
    expect(charged).toBe(Math.ceil(total - Number(saved![2]) - 1e-9) * 10);

    const json = await cli(['captions', file, '--pace', 'fast', '--gate', '--json', '--base-url', server.url, '--access-key', KEY], {}, 60_000);
    expect(json.code, json.stderr).toBe(0);
    const finished = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>).find((r) => r['type'] === 'finished')!;
    expect(finished['gate'].savedShare).toBeCloseTo(Number(saved![1]) / 100, 2);
    expect(finished['status']).toBe('COMPLETED');

    const plain = await cli(['captions', file, '--pace', 'fast', '--base-url', server.url, '--access-key', KEY], {}, 60_000);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).not.toContain('gate:');
    expect(plain.stdout).toContain(`charge: ${String(Math.ceil(total) * 10)} characters`);
  }, 120_000);
});
