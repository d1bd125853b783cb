import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { MicrophoneError } from '../errors.js';
import { Pcm16Chunker } from '../sources/pcm-chunker.js';
import type { MicrophoneBackendName, MicrophoneDevice } from './devices.js';
import { selectDevice } from './devices.js';
import { PushSource, type PushSourceOptions } from './push-source.js';

const run = promisify(execFile);

/**
 * The fallback: a capture program as a child process writing PCM16LE to a pipe. parec asks PulseAudio
 * (or PipeWire's pulse server) for the source's own sample spec, so the session gets the device's native
 * rate and the core resampler is the only one; arecord and sox capture at the rate asked (default 48 kHz).
 */
export type ProcessBackendName = Exclude<MicrophoneBackendName, 'pvrecorder'>;

export async function listProcessDevices(backend: ProcessBackendName): Promise<MicrophoneDevice[]> {
  try {
    if (backend === 'parec') return await listPulseSources();
    if (backend === 'arecord') {
      const { stdout } = await run('arecord', ['-L'], { timeout: 5000 });
      const names = stdout.split('\n').filter((l) => l !== '' && !/^\s/.test(l) && !notAMicrophone(l));
      return names.map((name, index) => ({ index, name, backend, isDefault: name === 'default' }));
    }
    return [{ index: 0, name: 'default', backend, isDefault: true }];
  } catch (caught) {
    throw spawnFailure(caught, backend);
  }
}

/**
 * ALSA PCMs in `arecord -L` that are no microphone: `null` captures endless zeros with no clock, the
 * rest are converters, other sound systems' bridges or playback-only outputs. Anything else (cards,
 * `default`, `pulse`, `pipewire`, a user's own PCMs from ~/.asoundrc) stays.
 */
const NOT_MICROPHONES = new Set(['null', 'lavrate', 'samplerate', 'speexrate', 'jack', 'oss', 'speex', 'upmix', 'vdownmix', 'dmix']);
const PLAYBACK_ONLY = /^(front|rear|center_lfe|side|surround\d+|iec958|hdmi|dmix):/;

function notAMicrophone(name: string): boolean {
  return NOT_MICROPHONES.has(name) || PLAYBACK_ONLY.test(name);
}

async function listPulseSources(): Promise<MicrophoneDevice[]> {
  const { stdout } = await run('pactl', ['list', 'short', 'sources'], { timeout: 5000 });
  let fallback = '';
  try {
    fallback = (await run('pactl', ['get-default-source'], { timeout: 5000 })).stdout.trim();
  } catch {
    const info = (await run('pactl', ['info'], { timeout: 5000 })).stdout;
    fallback = /Default Source:\s*(\S+)/.exec(info)?.[1] ?? '';
  }
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line, index) => {
      const [, name = '', , spec = ''] = line.split('\t');
      const match = /(\d+)ch\s+(\d+)Hz/.exec(spec);
      return {
        index,
        name,
        backend: 'parec' as const,
        ...(match ? { channels: Number(match[1]), sampleRate: Number(match[2]) } : {}),
        isDefault: name === fallback,
      };
    });
}

export interface ProcessCaptureOptions {
  readonly device?: string | number;
  /** Rate to capture at when the backend does not report the device's own (arecord, sox). Default 48000. */
  readonly sampleRate?: number;
  readonly channels?: number;
  /** How long to wait for the first audio before opening counts as done. Default 3000 ms. */
  readonly startTimeoutMs?: number;
  /** The bound on audio held for a reader that is behind, and who hears of drops. */
  readonly queue?: PushSourceOptions;
}

export async function openProcessCapture(backend: ProcessBackendName, options: ProcessCaptureOptions = {}): Promise<PushSource> {
  const devices = await listProcessDevices(backend);
  if (devices.length === 0 && (backend === 'parec' || options.device !== undefined)) throw MicrophoneError.noDevice(backend);
  // No default marked: PulseAudio's first source is still a real one, but arecord asks ALSA for
  // "default" and lets it fail (MIC_NO_DEVICE) rather than take whatever comes first in its list.
  const device = selectDevice(devices, options.device, backend) ?? (backend === 'parec' ? devices[0] : undefined);
  const sampleRate = device?.sampleRate ?? options.sampleRate ?? 48_000;
  const channels = device?.channels ?? options.channels ?? 1;
  const name = device?.name ?? 'default';
  const [command, args, env] = commandFor(backend, name, sampleRate, channels);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const source = new PushSource(name, { sampleRate, channels, encoding: 'pcm16' }, () => child.kill('SIGTERM'), options.queue);
  const chunker = new Pcm16Chunker(channels);
  let stderr = '';
  let sawData = false;
  let stopAsked = false;
  const firstData = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      sawData = true;
      source.push(chunker.push(chunk));
      resolve();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4000) stderr += chunk.toString();
    });
    child.once('error', (caught) => {
      const failure = spawnFailure(caught, backend);
      source.end(failure);
      reject(failure);
    });
    child.once('close', (code, signal) => {
      const failed = !stopAsked && code !== 0 && signal === null;
      const failure = failed ? exitFailure(backend, code, stderr) : undefined;
      source.end(failure);
      if (failure !== undefined) reject(failure);
      else resolve();
    });
  });
  const original = source.stop.bind(source);
  source.stop = () => {
    stopAsked = true;
    return original();
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([firstData, new Promise<void>((resolve) => (timer = setTimeout(resolve, options.startTimeoutMs ?? 3000)))]);
  } catch (caught) {
    if (!sawData) throw caught;
  } finally {
    clearTimeout(timer);
  }
  return source;
}

function commandFor(backend: ProcessBackendName, device: string, rate: number, channels: number): [string, string[], Record<string, string>] {
  const r = String(rate);
  const c = String(channels);
  switch (backend) {
    case 'parec':
      return ['parec', [`--device=${device}`, '--raw', '--format=s16le', `--rate=${r}`, `--channels=${c}`, '--latency-msec=20'], {}];
    case 'arecord':
      return ['arecord', ['-q', '-D', device, '-f', 'S16_LE', '-r', r, '-c', c, '-t', 'raw', '--period-time=20000'], {}];
    case 'sox': {
      // The format goes before -d too: without it sox opens the device at its own default (48 kHz stereo
      // from PulseAudio) and converts with its own resampler, downmix and dither. --buffer is 20 ms of
      // sox's 32-bit samples: its default 8192 bytes hold back up to 256 ms at 16 kHz, which stop() loses.
      const format = ['-e', 'signed-integer', '-b', '16', '-c', c, '-r', r];
      const buffer = String(Math.max(256, Math.round((rate * channels * 4) / 50)));
      return ['sox', ['-q', '--buffer', buffer, ...format, '-d', '-t', 'raw', ...format, '-L', '-'], device === 'default' ? {} : { AUDIODEV: device }];
    }
  }
}

function spawnFailure(caught: unknown, backend: string): MicrophoneError {
  if (caught instanceof MicrophoneError) return caught;
  const error = caught as NodeJS.ErrnoException & { stderr?: string };
  if (error.code === 'ENOENT') return new MicrophoneError('MIC_BACKEND_UNAVAILABLE', `${backend}: the program is not installed`, { cause: caught, backend });
  return exitFailure(backend, typeof error.code === 'number' ? error.code : null, error.stderr ?? error.message);
}

const DENIED = /permission denied|access denied|not permitted/i;

function exitFailure(backend: string, code: number | null, stderr: string): MicrophoneError {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const detail = lines.slice(-2).join(' ').slice(0, 300);
  if (DENIED.test(stderr)) {
    // The refusal is often not the last line: arecord and sox report it through ALSA's pulse plugin,
    // then add their own "Connection refused" or "no default audio device".
    const refusal = lines.find((l) => DENIED.test(l)) ?? detail;
    return new MicrophoneError('MIC_PERMISSION_DENIED', `${backend}: the audio system refused access to the microphone: ${refusal.slice(0, 300)}`, { backend });
  }
  if (/connection refused|no such (file|device)|no soundcards|unknown pcm|cannot find card|no such entity|connection failure/i.test(stderr)) {
    return MicrophoneError.noDevice(backend, detail);
  }
  return new MicrophoneError('MIC_CAPTURE_FAILED', `${backend} exited with code ${String(code)}: ${detail}`, { backend });
}
