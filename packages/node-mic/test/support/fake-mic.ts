import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A fake system microphone: a private PulseAudio daemon whose
 * default source is the monitor of a null sink, so what paplay writes to the sink is what any capture
 * client (pvrecorder, parec, arecord) records, bit for bit when the rates match. norewinds=1 and a
 * 10 ms parec "keeper" avoid the startup stall and the rewind that would drop captured audio.
 */
export interface FakeMic {
  /** XDG_RUNTIME_DIR and PULSE_SERVER pointing at the private daemon. */
  readonly env: Record<string, string>;
  readonly dir: string;
  play(wavPath: string): Promise<void>;
  stop(): Promise<void>;
}

export function requireTools(...tools: string[]): void {
  const missing = tools.filter((t) => spawnSync('which', [t]).status !== 0);
  if (missing.length > 0) {
    throw new Error(`these tests need ${missing.join(', ')} (Debian: pulseaudio, pulseaudio-utils, tmux); run npm run setup`);
  }
}

export async function startFakeMic({ rate = 16_000, channels = 1 } = {}): Promise<FakeMic> {
  requireTools('pulseaudio', 'pactl', 'parec', 'paplay');
  const dir = mkdtempSync(join(tmpdir(), 'fakemic-'));
  chmodSync(dir, 0o700);
  const script = join(dir, 'fake-mic.pa');
  writeFileSync(
    script,
    [
      'load-module module-native-protocol-unix auth-anonymous=1',
      `load-module module-null-sink sink_name=fakespk rate=${String(rate)} channels=${String(channels)} format=s16le norewinds=1 sink_properties=device.description=FakeSpeaker`,
      'load-module module-remap-source source_name=fakemic master=fakespk.monitor source_properties=device.description=FakeMic',
      'set-default-sink fakespk',
      'set-default-source fakemic',
      '',
    ].join('\n'),
  );
  const env = { XDG_RUNTIME_DIR: dir, PULSE_SERVER: `unix:${dir}/pulse/native` };
  const daemon = spawn(
    'pulseaudio',
    ['-n', '-F', script, '--daemonize=no', '--exit-idle-time=-1', '--disallow-exit', '--use-pid-file=no', '--log-target=stderr', '--log-level=error'],
    { env: { ...process.env, ...env, HOME: dir }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  daemon.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const socket = join(dir, 'pulse', 'native');
  for (let i = 0; i < 100 && !existsSync(socket); i++) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(socket)) {
    daemon.kill();
    throw new Error(`pulseaudio did not start: ${log}`);
  }
  execFileSync('pactl', ['info'], { env: { ...process.env, ...env }, stdio: 'ignore' });
  const keeper = spawn('parec', ['--device=fakespk.monitor', '--raw', '--latency-msec=10'], { env: { ...process.env, ...env }, stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300));
  const children: ChildProcess[] = [keeper, daemon];
  return {
    env,
    dir,
    play: (wavPath) =>
      new Promise((resolve, reject) => {
        const p = spawn('paplay', ['--device=fakespk', wavPath], { env: { ...process.env, ...env }, stdio: 'ignore' });
        p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`paplay exited ${String(code)}`))));
      }),
    async stop() {
      for (const p of children) {
        if (p.exitCode === null && p.signalCode === null) {
          p.kill('SIGTERM');
          await new Promise((r) => p.once('exit', r));
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A second way into the fake mic's daemon, one that demands its cookie: a native-protocol TCP listener
 * on 127.0.0.1 with anonymous access off. The unix socket cannot be made to refuse us: PulseAudio lets
 * in any client whose uid (SCM_CREDENTIALS) is the daemon's, whatever its cookie. Returns client
 * environments holding the right cookie and a wrong one.
 */
export async function cookieDoor(mic: FakeMic): Promise<{ right: Record<string, string>; wrong: Record<string, string> }> {
  const right = join(mic.dir, 'right.cookie');
  const wrong = join(mic.dir, 'wrong.cookie');
  writeFileSync(right, randomBytes(256));
  writeFileSync(wrong, randomBytes(256));
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const args = [`port=${String(port)}`, 'listen=127.0.0.1', 'auth-anonymous=0', 'auth-cookie-enabled=1', `cookie=${right}`];
    try {
      execFileSync('pactl', ['load-module', 'module-native-protocol-tcp', ...args], { env: { ...process.env, ...mic.env }, stdio: 'pipe' });
    } catch (caught) {
      lastError = caught; // the port was taken between freePort() and the load: try another
      continue;
    }
    const server = { XDG_RUNTIME_DIR: mic.dir, PULSE_SERVER: `tcp:127.0.0.1:${String(port)}` };
    return { right: { ...server, PULSE_COOKIE: right }, wrong: { ...server, PULSE_COOKIE: wrong } };
  }
  throw new Error(`could not add a TCP listener to the fake mic: ${String(lastError)}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** application.name of every client recording from the fake mic's daemon (libpulse sets it; ALSA's plugin says "ALSA plug-in [prog]"). */
export function recordingClients(mic: FakeMic): string[] {
  const out = execFileSync('pactl', ['list', 'source-outputs'], { env: { ...process.env, ...mic.env }, encoding: 'utf8' });
  return [...out.matchAll(/application\.name = "([^"]*)"/g)].map((m) => m[1] as string);
}

/** The audio drivers this sox can record from (`sox -h` lists them); the pulseaudio one comes with libsox-fmt-pulse. */
export function soxDrivers(): string[] {
  const help = spawnSync('sox', ['-h'], { encoding: 'utf8' }).stdout ?? '';
  return /AUDIO DEVICE DRIVERS:\s*(.*)/.exec(help)?.[1]?.trim().split(/\s+/) ?? [];
}

const PULSE_VARS = ['XDG_RUNTIME_DIR', 'PULSE_SERVER', 'PULSE_COOKIE'];

/** Points this process's PulseAudio clients (pvrecorder loads libpulse) at the fake mic; returns an undo. */
export function usePulse(env: Record<string, string>): () => void {
  const saved = Object.fromEntries([...new Set([...PULSE_VARS, ...Object.keys(env)])].map((k) => [k, process.env[k]]));
  for (const k of PULSE_VARS) delete process.env[k];
  Object.assign(process.env, env);
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
