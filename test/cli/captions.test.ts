import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startServer, type RunningServer } from '@soundclone/server';
import { BUNDLED_SAMPLE } from '@soundclone/node-mic';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { indexOfSamples, sampleSamples, storedAudio, writeWav } from '../../packages/node-mic/test/support/audio.js';
import { startFakeMic, type FakeMic } from '../../packages/node-mic/test/support/fake-mic.js';
import { BIN, cli, freshDataDir } from './support/cli.js';
import { startCliServer, type CliServer } from './support/cli-server.js';
import { Terminal } from './support/terminal.js';
import { normalize, report, wer } from '../recognition/support.js';

const KEY = 'key-cli';
const SAMPLE = sampleSamples();
// The local server keeps its state in a test directory, never the real home.
const SHELL_ENV = { PATH: process.env['PATH'], HOME: process.env['HOME'], SOUNDCLONE_DATA_DIR: freshDataDir() };
const soundclone = `${process.execPath} ${BIN}`;
const stored = (server: RunningServer, sessionId: string): Promise<Int16Array> => storedAudio(server, sessionId, KEY);

/** `soundclone captions` in a real terminal (tmux), read off the screen as a person would. */
describe('soundclone captions in a terminal', () => {
  let setup: CliServer | undefined;
  let server: RunningServer;
  let dir: string;
  let term: Terminal | undefined;
  beforeAll(async () => {
    setup = await startCliServer(KEY, 'cli-captions-', { retainRealtimeAudioSamples: 16_000 * 120 });
    ({ server, dir } = setup);
  }, 120_000);
  afterEach(() => {
    term?.close();
    term = undefined;
  });
  afterAll(() => setup?.close());

  it('the main job: the bundled sample through the in-process local server, partial rewritten in place, exits 0 on its own', async () => {
    term = Terminal.open(SHELL_ENV);
    term.run(`${soundclone} captions --sample`);
    const done = await term.waitFor(/EXIT:(\d+)/, 60_000);
    const screen = term.screen();
    expect(done[1]).toBe('0');
    expect(screen).toMatch(/started the local reference server at http:\/\/127\.0\.0\.1:\d+/);
    expect(screen).toMatch(/\[session rs_\S+: streaming\]/);
    expect(screen).toMatch(/finished: COMPLETED, [1-9]\d* lines, 15\.39 s captured \(246240 frames at 16000 Hz\)/);
    expect(screen).toContain('usage: 246240 samples received, 246240 captured');
    expect(screen).toMatch(/charge: \d+ characters/);
    // In place: the partial is redrawn after a carriage return and erase-line many times, in dim type.
    const raw = term.raw();
    expect(raw.split('\r\x1b[2K\x1b[2m').length - 1).toBeGreaterThan(5);
    // Committed lines stay: every line the summary counts is on the screen, once.
    const count = Number(/finished: COMPLETED, (\d+) lines/.exec(screen)?.[1]);
    const shown = screen
      .split('\n')
      .map((l) => l.trimEnd())
      .filter((l) => l !== '' && !l.startsWith('[') && !l.startsWith('soundclone:') && !l.includes(BIN) && !/^[\w.-]*[#$]$/.test(l) && !/^(finished|usage|charge|EXIT)/.test(l));
    expect(shown.length).toBe(count);
    // Real words: setup installs PocketSphinx, so the local server recognizes the recording.
    expect(screen).toContain('soundclone: speech recognition: pocketsphinx-en-us');
    const rate = wer([{ reference: normalize(BUNDLED_SAMPLE.text), hypothesis: normalize(shown.join(' ')) }]);
    report('captions --sample', rate, normalize(shown.join(' ')));
    expect(rate).toBeLessThan(0.45);
  }, 90_000);

  it('a file, Ctrl-C in the middle: finishes properly, prints usage and charge, the server kept exactly what was sent', async () => {
    term = Terminal.open(SHELL_ENV);
    term.run(`${soundclone} captions ${BUNDLED_SAMPLE.path} --base-url ${server.url} --access-key ${KEY}`);
    const [, sessionId] = (await term.waitFor(/\[session (rs_\S+): streaming\]/)) as unknown as [string, string];
    await new Promise((r) => setTimeout(r, 3000));
    term.ctrlC();
    const done = await term.waitFor(/EXIT:(\d+)/, 30_000);
    const screen = term.screen();
    expect(done[1]).toBe('0');
    expect(screen).not.toContain('started the local reference server');
    expect(screen).toContain('[Ctrl-C: finishing the session');
    // States in words for people: no internal reasons such as "(finish())" or "(finished)".
    expect(screen).toContain('[finishing: sending the last audio, waiting for the final transcript]');
    expect(screen).toContain('[finished]');
    expect(screen).not.toMatch(/\[\w+ \(/);
    expect(screen).toMatch(/usage: \d+ samples received, \d+ captured, wall time \d+\.\d s$/m);
    const m = /finished: COMPLETED, \d+ lines, ([\d.]+) s captured \((\d+) frames at 16000 Hz\)/.exec(screen);
    expect(m).not.toBeNull();
    const frames = Number(m?.[2]);
    expect(Number(m?.[1])).toBeGreaterThan(2);
    expect(Number(m?.[1])).toBeLessThan(12);
    expect(screen).toContain(`usage: ${String(frames)} samples received, ${String(frames)} captured`);
    expect(screen).toMatch(/charge: \d+ characters/);
    expect(await stored(server, sessionId)).toEqual(SAMPLE.slice(0, frames));
  }, 60_000);

  it('shows rotations and a dropped connection as they happen; nothing is lost across them', async () => {
    const rotating = await startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY], retainRealtimeAudioSamples: 16_000 * 120, realtimeTiming: { rotateEverySamples: 16_000 } });
    try {
      term = Terminal.open(SHELL_ENV);
      term.run(`${soundclone} captions ${BUNDLED_SAMPLE.path} --base-url ${rotating.url} --access-key ${KEY}`);
      const [, sessionId] = (await term.waitFor(/\[session (rs_\S+): streaming\]/)) as unknown as [string, string];
      await term.waitFor(/\[rotated: epoch 1 -> 2 at sample \d+\]/, 10_000);
      expect(rotating.faults.socket.closeSocket(sessionId, 4000, 'test drop')).toBe(true);
      await term.waitFor(/\[reconnecting: attempt 1 in \d+ ms/, 10_000);
      await term.waitFor(/\[reconnected: server had \d+ samples, resending \d+\]/, 10_000);
      await new Promise((r) => setTimeout(r, 1000));
      term.ctrlC();
      const done = await term.waitFor(/EXIT:(\d+)/, 30_000);
      expect(done[1]).toBe('0');
      const screen = term.screen();
      expect(screen).toContain('[streaming again]');
      expect(screen).not.toContain('[rotating');
      const frames = Number(/\((\d+) frames at 16000 Hz\)/.exec(screen)?.[1]);
      expect(frames).toBeGreaterThan(32_000);
      expect(await stored(rotating, sessionId)).toEqual(SAMPLE.slice(0, frames));
    } finally {
      await rotating.close();
    }
  }, 60_000);

  it('a binary download (--format pdf) to stdout is refused on a terminal, before anything connects', async () => {
    term = Terminal.open(SHELL_ENV);
    term.run(`${soundclone} transcripts get tr_any --format pdf`);
    const done = await term.waitFor(/EXIT:(\d+)/, 20_000);
    expect(done[1]).toBe('2');
    const screen = term.screen();
    expect(screen).toContain('--format pdf is binary and stdout is a terminal: give --out PATH or redirect stdout');
    expect(screen).not.toContain('started the local reference server');
  }, 30_000);

  describe('on the fake microphone', () => {
    let mic: FakeMic;
    beforeAll(async () => void (mic = await startFakeMic({ rate: 16_000 })));
    afterAll(async () => mic?.stop());

    it('devices lists the fake microphone', async () => {
      const run = await cli(['devices', '--json'], { ...mic.env });
      expect(run.code).toBe(0);
      expect((JSON.parse(run.stdout) as Array<{ name: string; backend: string }>).map((d) => d.name)).toContain('FakeMic');
      const parec = await cli(['devices', '--backend', 'parec'], { ...mic.env });
      expect(parec.stdout).toMatch(/^\d+\s+fakemic\s+parec\s+16000\s+1\s+yes$/m);
    });

    it('--mic: live captions of what is spoken, Ctrl-C finishes; the server stored the spoken samples bit for bit', async () => {
      const clip = SAMPLE.slice(113_600, 113_600 + 47_840);
      const clipPath = writeWav(join(dir, 'clip.wav'), clip, 16_000);
      term = Terminal.open({ ...SHELL_ENV, ...mic.env, SOUNDCLONE_BASE_URL: server.url, SOUNDCLONE_ACCESS_KEY: KEY });
      term.run(`${soundclone} captions --mic`);
      await term.waitFor(/listening on FakeMic \(pvrecorder, 16000 Hz, 1 ch\)/);
      const [, sessionId] = (await term.waitFor(/\[session (rs_\S+): streaming\]/)) as unknown as [string, string];
      // The capture's health on the status line: the device and its level once audio flows.
      await term.waitFor(/\[microphone: FakeMic, 16000 Hz, level (-?\d+ dBFS|silent)\]/);
      await new Promise((r) => setTimeout(r, 300));
      await mic.play(clipPath);
      await new Promise((r) => setTimeout(r, 1500));
      const before = term.screen();
      term.ctrlC();
      const done = await term.waitFor(/EXIT:(\d+)/, 30_000);
      const screen = term.screen();
      expect(done[1]).toBe('0');
      const lineCount = Number(/finished: COMPLETED, (\d+) lines/.exec(screen)?.[1]);
      expect(lineCount).toBeGreaterThan(0);
      // The committed lines were on screen before Ctrl-C: captions are live, not printed at the end.
      expect(before.split('\n').filter((l) => /^[a-z]/.test(l) && !l.startsWith('soundclone')).length).toBeGreaterThan(0);
      const frames = Number(/\((\d+) frames at 16000 Hz\)/.exec(screen)?.[1]);
      expect(screen).toContain(`usage: ${String(frames)} samples received, ${String(frames)} captured`);
      const audio = await stored(server, sessionId);
      expect(audio.length).toBe(frames);
      expect(indexOfSamples(audio, clip)).toBeGreaterThan(0);
    }, 60_000);

    it('--mic with the local server on a fresh data directory, as a new user runs it: no capture gap at the start', async () => {
      // The microphone opens once the local server is ready; opened before it, the server's start
      // (modules, journal, recognizer model) left the capture more than a second behind its clock when
      // the session began reading: a "capture gap ... at sample 0 (starved)" line and a discontinuity
      // where the first words are.
      const clip = SAMPLE.slice(113_600, 113_600 + 32_000);
      const clipPath = writeWav(join(dir, 'first-words.wav'), clip, 16_000);
      term = Terminal.open({ ...SHELL_ENV, ...mic.env, SOUNDCLONE_DATA_DIR: freshDataDir() });
      term.run(`${soundclone} captions --mic`);
      await term.waitFor(/listening on FakeMic \(pvrecorder, 16000 Hz, 1 ch\)/, 60_000);
      // The first words come as soon as the command says it listens.
      await mic.play(clipPath);
      await term.waitFor(/\[session rs_\S+: streaming\]/);
      await new Promise((r) => setTimeout(r, 1500));
      term.ctrlC();
      const done = await term.waitFor(/EXIT:(\d+)/, 30_000);
      const screen = term.screen();
      expect(done[1]).toBe('0');
      expect(screen).toMatch(/started the local reference server at http:\/\/127\.0\.0\.1:\d+/);
      expect(screen).not.toMatch(/capture gap/);
      expect(screen).not.toMatch(/\[gap: /);
      expect(screen).not.toMatch(/^lost: /m);
      const frames = Number(/\((\d+) frames at 16000 Hz\)/.exec(screen)?.[1]);
      expect(screen).toContain(`usage: ${String(frames)} samples received, ${String(frames)} captured`);
      expect(frames).toBeGreaterThanOrEqual(clip.length);
    }, 90_000);

    it('--mic with parec: the source goes away and comes back; the status line says so, the session goes on and finishes', async () => {
      const env = { ...process.env, ...mic.env };
      const pactl = (...args: string[]): string => execFileSync('pactl', args, { env, encoding: 'utf8' });
      term = Terminal.open({ ...SHELL_ENV, ...mic.env, SOUNDCLONE_BASE_URL: server.url, SOUNDCLONE_ACCESS_KEY: KEY });
      term.run(`${soundclone} captions --mic fakemic --backend parec`);
      await term.waitFor(/\[session (rs_\S+): streaming\]/);
      await term.waitFor(/\[microphone: fakemic, 16000 Hz/);
      const remap = pactl('list', 'short', 'modules').split('\n').find((l) => l.includes('module-remap-source'))!.split('\t')[0]!;
      pactl('unload-module', remap);
      await term.waitFor(/\[device lost \(fakemic: device-lost\) — reconnecting to default\]/);
      await term.waitFor(/\[microphone back: fakespk\.monitor at 16000 Hz after \d+\.\d s \(device-changed\)\]/);
      pactl('load-module', 'module-remap-source', 'source_name=fakemic', 'master=fakespk.monitor', 'source_properties=device.description=FakeMic');
      pactl('set-default-source', 'fakemic');
      await term.waitFor(/\[microphone back: fakemic at 16000 Hz/);
      term.ctrlC();
      const done = await term.waitFor(/EXIT:(\d+)/, 30_000);
      expect(done[1]).toBe('0');
      expect(term.screen()).toMatch(/finished: COMPLETED/);
    }, 60_000);
  });
});
