import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkFromWorkspace, manifestOf, root, unpackInto } from './pack.js';

/**
 * Packs every published package as npm would (pnpm pack rewrites workspace: ranges), unpacks the
 * tarballs into a clean folder and imports them there, in ESM and through TypeScript with NodeNext
 * resolution. A broken `exports` map, a missing file in `files` or a type that does not resolve
 * fails here. Dependencies are linked from the workspace's own store so the test needs no network.
 */
const PACKAGES = ['core', 'node-mic', 'web-audio', 'server', 'testing', 'cli', 'react', 'vue', 'svelte'] as const;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'soundclone-packed-'));
  const tarballs = join(dir, 'tarballs');
  mkdirSync(tarballs);
  for (const pkg of PACKAGES) {
    const target = unpackInto(dir, pkg, tarballs);
    const manifest = manifestOf(target);
    // Optional peers too (rxjs for core's ./rx, ws in Node): the consumer here is one that uses them.
    linkFromWorkspace(dir, pkg, Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }));
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
}, 120_000);

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('packed artifacts', () => {
  it('ship only dist, src, README and package.json, with a workspace-free manifest', () => {
    for (const pkg of PACKAGES) {
      const target = join(dir, 'node_modules', '@soundclone', pkg);
      const manifest = readFileSync(join(target, 'package.json'), 'utf8');
      expect(manifest).not.toContain('workspace:');
      expect(existsSync(join(target, 'dist', 'index.js'))).toBe(true);
      expect(existsSync(join(target, 'dist', 'index.d.ts'))).toBe(true);
      expect(existsSync(join(target, 'README.md'))).toBe(true);
    }
  });

  it('import in plain Node ESM through their exports maps', () => {
    const script = `
      import * as core from '@soundclone/core';
      const r = new core.Resampler({ inputRate: 48000, outputRate: 16000 });
      const out = new Float32Array(r.maxOutputFor(4800));
      const n = r.process(new Float32Array(4800), out);
      const encoder = new core.FrameEncoder({ inputRate: 44100 });
      encoder.write(new Float32Array(44100));
      const frame = encoder.nextFrame();
      let typed = false;
      try { new core.Resampler({ inputRate: 1, outputRate: 16000 }); } catch (e) { typed = e instanceof core.DspError && e.code === 'DSP_UNSUPPORTED_RATE'; }
      for (const name of ['@soundclone/node-mic', '@soundclone/web-audio', '@soundclone/server', '@soundclone/testing', '@soundclone/cli']) await import(name);
      // The framework bindings, on the consumer's framework: each exports its one entry.
      const bindings = [typeof (await import('@soundclone/react')).useLiveCaptions, typeof (await import('@soundclone/vue')).useLiveCaptions, typeof (await import('@soundclone/svelte')).liveCaptions];
      let blocked = false;
      try { await import('@soundclone/core/dist/dsp/resampler.js'); } catch { blocked = true; }
      const { default: worklet } = await import('@soundclone/web-audio/worklet-source');
      const workletSelfContained = worklet.includes('registerProcessor(') && !worklet.split('\\n').some((l) => l.trimStart().startsWith('import '));
      // The sibling-package subpath: the wire protocol the server imports, the same objects as the main entry's.
      const internal = await import('@soundclone/core/internal');
      const view = new DataView(new ArrayBuffer(internal.FRAME.headerBytes + 2));
      internal.encodeFrameHeader(view, 0, 1, 2 ** 33);
      const decoded = internal.decodeFrameHeader(view, 0, view.byteLength);
      const internalWire = internal.PATHS === internal.protocol.PATHS && internal.TASK_STATUSES === internal.protocol.TASK_STATUSES && internal.CLOSE_CODES.SESSION_NOT_FOUND === 4404 && decoded.ok && decoded.startSample === 2 ** 33;
      const guarded = core.isSoundCloneError(new core.NotFoundError('NOT_FOUND', 'x', { status: 404 }), core.ApiError);
      console.log(JSON.stringify({ counted: n === r.outputFrames && n === Math.floor((4800 - 1 - r.latencyFrames) / 3) + 1, frame: frame && frame.sampleCount, typed, guarded, blocked, ring: typeof core.SampleRing, workletSelfContained, internalWire, bindings }));
    `;
    writeFileSync(join(dir, 'check.mjs'), script);
    const result = JSON.parse(execFileSync(process.execPath, ['check.mjs'], { cwd: dir, encoding: 'utf8' })) as Record<string, unknown>;
    expect(result).toEqual({ counted: true, frame: 320, typed: true, guarded: true, blocked: true, ring: 'function', workletSelfContained: true, internalWire: true, bindings: ['function', 'function', 'function'] });
  });

  it('expose ./internal for the sibling packages, apart from the public entry, in ESM and in TypeScript', () => {
    writeFileSync(join(dir, 'internal-check.mjs'), `
      import * as core from '@soundclone/core';
      import * as internal from '@soundclone/core/internal';
      const parsed = internal.parseServerMessage(JSON.stringify({ type: 'ping', ts: 1 }));
      const tone = new Float32Array(4);
      internal.sine(tone, 1000, 16000, 1, Math.PI / 2);
      console.log(JSON.stringify({
        prefix: internal.protocol.API_PREFIX,
        tone: tone[0],
        parser: typeof parsed,
        machinery: ['StateMachine', 'LineStore', 'AudioOutbox', 'designPolyphase', 'apiErrorFromResponse', 'mulberry32', 'redact', 'classifyLoss'].every((n) => typeof internal[n] === 'function'),
        kept: ['sine', 'fitTone', 'parseServerMessage', 'StateMachine', 'protocol', 'TASK_STATUSES', 'CLOSE_CLASSES', 'redact', 'RingSegments', 'vttCueBlock', 'mulberry32'].filter((n) => n in core),
      }));
    `);
    const result = JSON.parse(execFileSync(process.execPath, ['internal-check.mjs'], { cwd: dir, encoding: 'utf8' })) as Record<string, unknown>;
    expect(result).toEqual({ prefix: '/sound_clone/api/v1', tone: 1, parser: 'object', machinery: true, kept: [] });

    mkdirSync(join(dir, 'internal-ts'), { recursive: true });
    writeFileSync(join(dir, 'internal-ts', 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: false, lib: ['ES2023', 'DOM'], types: [] },
      files: ['consumer.ts'],
    }));
    writeFileSync(join(dir, 'internal-ts', 'consumer.ts'), `
      import { protocol, designPolyphase, type PolyphaseFilter, type RefusalKind } from '@soundclone/core/internal';
      import type { ServerMessageType } from '@soundclone/core';
      const filter: PolyphaseFilter = designPolyphase(48000, 16000, 'fast');
      const kind: RefusalKind | undefined = undefined;
      const type: ServerMessageType = 'ping';
      export const used = [protocol.API_PREFIX, filter, kind, type];
    `);
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = spawnSync(process.execPath, [tsc, '-p', join(dir, 'internal-ts')], { cwd: dir, encoding: 'utf8' });
    expect(`${checked.stdout}${checked.stderr}`).toBe('');
    expect(checked.status).toBe(0);
  });

  it('expose ./rx: Observables of a session and of transcription watching, on the consumer\'s rxjs, in ESM and in TypeScript', () => {
    writeFileSync(join(dir, 'rx-check.mjs'), `
      import * as core from '@soundclone/core';
      import * as rx from '@soundclone/core/rx';
      import { Observable, toArray, lastValueFrom } from 'rxjs';
      // A real session that never connects: closed from idle, its streams replay and complete.
      const session = new core.RealtimeSocketSession({ sessionId: 'rs_1', socketUrl: 'ws://127.0.0.1:9/socket', token: 'rtt_t', WebSocket: class {} });
      const streams = rx.sessionStreams(session);
      const states = [];
      const completed = [];
      streams.state$.subscribe({ next: (s) => states.push(s), complete: () => completed.push('state$') });
      streams.lines$.subscribe({ complete: () => completed.push('lines$') });
      const listening = session.listenerCount('state');
      session.close();
      const changes = { async *[Symbol.asyncIterator]() { yield { status: 'QUEUED' }; yield { status: 'COMPLETED' }; } };
      const watched = rx.watchTranscription({ watch: () => changes }, 'tr_1');
      const statuses = (await lastValueFrom(watched.pipe(toArray()))).map((t) => t.status);
      console.log(JSON.stringify({
        states, completed, listening, left: session.eventNames(), statuses,
        sameRxjs: streams.lines$ instanceof Observable && watched instanceof Observable,
        exports: Object.keys(rx).sort(),
        inMain: ['sessionStreams', 'watchTranscription'].filter((n) => n in core),
      }));
    `);
    const result = JSON.parse(execFileSync(process.execPath, ['rx-check.mjs'], { cwd: dir, encoding: 'utf8' })) as Record<string, unknown>;
    expect(result).toEqual({
      states: ['idle', 'closed'], completed: ['state$', 'lines$'], listening: 2, left: [], statuses: ['QUEUED', 'COMPLETED'],
      sameRxjs: true, exports: ['sessionStreams', 'watchTranscription'], inMain: [],
    });

    mkdirSync(join(dir, 'rx-ts'), { recursive: true });
    writeFileSync(join(dir, 'rx-ts', 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: false, lib: ['ES2023', 'DOM'], types: [] },
      files: ['consumer.ts'],
    }));
    writeFileSync(join(dir, 'rx-ts', 'consumer.ts'), `
      import type { Observable } from 'rxjs';
      import type { RealtimeSocketSession, SessionLine, SoundClone, TranscriptionTask } from '@soundclone/core';
      import { sessionStreams, watchTranscription, type SessionStreams } from '@soundclone/core/rx';
      export function lines(session: RealtimeSocketSession): Observable<SessionLine> {
        const streams: SessionStreams = sessionStreams(session);
        return streams.lines$;
      }
      export function watch(client: SoundClone, id: string): Observable<TranscriptionTask> {
        return watchTranscription(client.stt.transcriptions, id, { pollIntervalMs: 100 });
      }
      export async function statuses(client: SoundClone, id: string): Promise<string[]> {
        const seen: string[] = [];
        for await (const task of client.stt.transcriptions.watch(id, { signal: AbortSignal.timeout(1000) })) seen.push(task.status);
        return seen;
      }
    `);
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = spawnSync(process.execPath, [tsc, '-p', join(dir, 'rx-ts')], { cwd: dir, encoding: 'utf8' });
    expect(`${checked.stdout}${checked.stderr}`).toBe('');
    expect(checked.status).toBe(0);
  });

  it('keep rxjs out of the main entry and ./internal: bundled with nothing external, neither loads a module of it', async () => {
    // esbuild comes from web-audio, which builds its worklet with it.
    type Build = (options: Record<string, unknown>) => Promise<{ metafile: { inputs: Record<string, unknown> } }>;
    const { build } = createRequire(join(root, 'packages', 'web-audio', 'package.json'))('esbuild') as { build: Build };
    const modulesOf = async (specifier: string): Promise<string[]> => {
      const entry = join(dir, `bundle-${specifier.replace(/\W/g, '_')}.mjs`);
      writeFileSync(entry, `export * from '${specifier}';\n`);
      const result = await build({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'browser', write: false, metafile: true, logLevel: 'silent' });
      return Object.keys(result.metafile.inputs);
    };
    const rxjs = (inputs: string[]): string[] => inputs.filter((path) => /(^|[\\/])rxjs[\\/]/.test(path));
    const main = await modulesOf('@soundclone/core');
    const internal = await modulesOf('@soundclone/core/internal');
    const rx = await modulesOf('@soundclone/core/rx');
    expect(main.some((path) => path.endsWith('realtime/realtime-session.js'))).toBe(true);
    expect(rxjs(main)).toEqual([]);
    expect(rxjs(internal)).toEqual([]);
    // The same check finds rxjs where it is: the subpath that is built on it.
    expect(rxjs(rx).length).toBeGreaterThan(0);
  }, 60_000);

  it('run the packed soundclone command through its bin entry, with its dependencies from the other tarballs', () => {
    const manifest = JSON.parse(readFileSync(join(dir, 'node_modules', '@soundclone', 'cli', 'package.json'), 'utf8')) as { bin: Record<string, string>; version: string };
    const bin = join(dir, 'node_modules', '@soundclone', 'cli', manifest.bin['soundclone'] as string);
    // Its local server keeps state: in a directory of this test, never the real home.
    const env = { PATH: process.env['PATH'] ?? '', SOUNDCLONE_DATA_DIR: join(dir, 'soundclone-data') };
    const help = execFileSync(process.execPath, [bin, '--help'], { cwd: dir, encoding: 'utf8', env });
    expect(help).toMatch(/^usage: soundclone COMMAND/);
    expect(help).toContain('captions');
    const voices = JSON.parse(execFileSync(process.execPath, [bin, 'voices', 'list', '--json', '--recognizer', 'deterministic'], { cwd: dir, encoding: 'utf8', env, stdio: 'pipe' })) as Array<{ name: string }>;
    expect(voices.map((v) => v.name)).toContain('Aria');
    expect(readFileSync(join(dir, 'soundclone-data', 'state.jsonl'), 'utf8')).toMatch(/^\{"type":"header","format":"soundclone-state","version":1\}\n/);
  });

  it('type-check from a TypeScript consumer with NodeNext resolution', () => {
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: false, lib: ['ES2023', 'DOM'], types: [] },
      files: ['consumer.ts'],
    }));
    writeFileSync(join(dir, 'consumer.ts'), `
      import { Resampler, FrameEncoder, SampleRing, DspError, ApiError, isSoundCloneError, type EncodedFrame, type ResamplerOptions } from '@soundclone/core';
      const options: ResamplerOptions = { inputRate: 44100, outputRate: 16000, quality: 'fast' };
      const r: Resampler = new Resampler(options);
      const frame: EncodedFrame | null = new FrameEncoder({ inputRate: 48000 }).nextFrame();
      const caught: unknown = new Error('x');
      const status: number | undefined = isSoundCloneError(caught, ApiError) ? caught.status : undefined;
      const ring = new SampleRing({ kind: 'int16', capacity: 1024 });
      const code: string = new DspError('DSP_INVALID_OPTION', 'x').code;
      import { FRAME, encodeFrameHeader, type FrameDecodeResult, type TaskStatus } from '@soundclone/core/internal';
      encodeFrameHeader(new DataView(new ArrayBuffer(FRAME.headerBytes)), 0, 1, 0);
      const taskStatus: TaskStatus = 'COMPLETED';
      const refused: FrameDecodeResult = { ok: false, reason: 'BAD_MAGIC' };
      import { createLiveCaptions, type LiveCaptionsSnapshot } from '@soundclone/web-audio';
      import { liveCaptions, type LiveCaptionsReadable } from '@soundclone/svelte';
      const store = createLiveCaptions({ credentials: async () => ({ sessionId: 's', token: 't', socketUrl: 'wss://example.invalid/socket' }) });
      const idle: LiveCaptionsSnapshot = store.getServerSnapshot();
      const readable: LiveCaptionsReadable = liveCaptions(store);
      export const used = [r.taps, frame?.startSample, ring.capacity, code, status, taskStatus, refused, idle.status, readable.store];
    `);
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    expect(() => execFileSync(process.execPath, [tsc, '-p', dir], { cwd: dir, encoding: 'utf8', stdio: 'pipe' })).not.toThrow();
  });
});

/**
 * The CLI as one file: `pnpm pack:cli` (packages/cli/scripts/pack-standalone.mjs) packs it with every
 * package it runs on bundled inside, and the README's commands run it with npx and pnpm dlx. Here they
 * run exactly as the READMEs print them, in an empty folder, with a fresh HOME (so an empty npm cache and
 * pnpm store and no user configuration) and npm_config_offline=true: nothing may come from a registry.
 */
describe('the standalone CLI tarball', () => {
  const { version } = JSON.parse(readFileSync(join(root, 'packages', 'cli', 'package.json'), 'utf8')) as { version: string };
  const tarball = `soundclone-cli-${version}.tgz`;
  let work: string;
  let cwd: string;

  /** The `npx` and `pnpm dlx` lines of a README's code blocks, without their trailing comments. */
  function readmeCommands(path: string): { npx: string; dlx: string } {
    const lines = readFileSync(path, 'utf8').split('\n').map((l) => l.replace(/\s+#.*$/, '').trim());
    const npx = lines.find((l) => l.startsWith('npx ') && l.includes(tarball));
    const dlx = lines.find((l) => l.startsWith('pnpm dlx ') && l.includes(tarball));
    if (npx === undefined || dlx === undefined) throw new Error(`${path} shows no npx and pnpm dlx command for ${tarball}`);
    return { npx, dlx };
  }

  /** A shell command in the empty folder, isolated from this machine's npm and pnpm setup. */
  function shell(command: string, extraEnv: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) {
      // npm_config_* (set by pnpm around this run), pnpm's and XDG's folders would point at the real store and cache.
      if (v === undefined || /^(npm_|pnpm_|xdg_)/i.test(k)) continue;
      env[k] = v;
    }
    Object.assign(env, { HOME: join(work, 'home'), npm_config_offline: 'true', npm_config_update_notifier: 'false' }, extraEnv);
    const result = spawnSync('sh', ['-c', command], { cwd, env, encoding: 'utf8', timeout: 150_000 });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'soundclone-standalone-test-'));
    cwd = join(work, 'empty');
    mkdirSync(cwd);
    mkdirSync(join(work, 'home'));
    execFileSync(process.execPath, [join(root, 'packages', 'cli', 'scripts', 'pack-standalone.mjs'), '--pack-destination', cwd], { cwd: root, stdio: 'pipe' });
  }, 120_000);

  afterAll(() => {
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  it('holds the workspace packages, their dependencies and the speech sample, and no machine-built binding', () => {
    expect(readdirSync(cwd)).toEqual([tarball]);
    const entries = new Set(execFileSync('tar', ['-tzf', join(cwd, tarball)], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).split('\n'));
    for (const file of [
      'package/bin/soundclone.js',
      'package/dist/bin.js',
      'package/node_modules/@soundclone/core/dist/index.js',
      'package/node_modules/@soundclone/server/dist/index.js',
      'package/node_modules/@soundclone/server/scripts/build-pocketsphinx.mjs',
      'package/node_modules/@soundclone/server/native/pocketsphinx-addon.c',
      'package/node_modules/@soundclone/node-mic/samples/sense-and-sensibility.wav',
      'package/node_modules/ws/package.json',
      'package/node_modules/docx/package.json',
      'package/node_modules/pdfkit/package.json',
      'package/node_modules/@picovoice/pvrecorder-node/package.json',
    ]) {
      expect(entries, file).toContain(file);
    }
    expect([...entries].filter((e) => e.endsWith('.node') && e.includes('pocketsphinx'))).toEqual([]);
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', join(cwd, tarball), 'package/package.json'], { encoding: 'utf8' })) as { dependencies: Record<string, string>; bundleDependencies: string[] };
    expect([...manifest.bundleDependencies].sort()).toEqual(Object.keys(manifest.dependencies).sort());
    expect(JSON.stringify(manifest)).not.toContain('workspace:');
  });

  it('both READMEs show the same commands', () => {
    expect(readmeCommands(join(root, 'packages', 'cli', 'README.md'))).toEqual(readmeCommands(join(root, 'README.md')));
  });

  it('npx: the README command installs offline into an empty cache and captions the bundled sample with PocketSphinx', () => {
    const { npx } = readmeCommands(join(root, 'packages', 'cli', 'README.md'));
    const help = shell(npx.replace(/ captions --sample$/, ' --help'));
    expect(help.stderr).not.toMatch(/ENOTCACHED|ERR!|npm error/);
    expect(help.stdout).toMatch(/^usage: soundclone COMMAND/);
    expect(help.status).toBe(0);

    // The second run reuses the install: npm checks it and must find nothing to fetch.
    const run = shell(npx);
    expect(run.stderr).toContain('started the local reference server at http://127.0.0.1:');
    // The binding is built on first use inside the installed package (setup installs libpocketsphinx-dev).
    expect(run.stderr).toContain('soundclone: speech recognition: pocketsphinx-en-us');
    expect(run.stdout).toContain('dashwood');
    expect(run.stdout).toContain('finished: COMPLETED, 3 lines, 15.39 s captured (246240 frames at 16000 Hz)');
    expect(run.status).toBe(0);
  }, 180_000);

  it('pnpm dlx: the README command runs from a fresh store, and falls back with a notice where PocketSphinx cannot be built', () => {
    const { dlx } = readmeCommands(join(root, 'packages', 'cli', 'README.md'));
    // CC=false: a machine without a C compiler, so the binding cannot be built.
    const run = shell(dlx, { CC: 'false' });
    expect(run.stderr).toContain('soundclone: recognizer: using the deterministic recognizer, not real speech recognition: pocketsphinx binding not built');
    expect(run.stdout).toContain('finished: COMPLETED, 3 lines, 15.39 s captured (246240 frames at 16000 Hz)');
    expect(run.status).toBe(0);
  }, 180_000);
});
