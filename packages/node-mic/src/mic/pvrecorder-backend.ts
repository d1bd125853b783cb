import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { MicrophoneError } from '../errors.js';
import { selectDevice, type MicrophoneDevice } from './devices.js';
import { pulseRefusal } from './pulse-refusal.js';
import { PushSource, type PushSourceOptions } from './push-source.js';

/** The part of @picovoice/pvrecorder-node we use (CommonJS, loaded lazily: a platform without a prebuilt library falls back). */
interface PvRecorderInstance {
  readonly sampleRate: number;
  start(): void;
  stop(): void;
  read(): Promise<Int16Array>;
  release(): void;
  getSelectedDevice(): string;
}
interface PvRecorderClass {
  new (frameLength: number, deviceIndex?: number, bufferedFramesCount?: number): PvRecorderInstance;
  getAvailableDevices(): string[];
}

let loaded: PvRecorderClass | Error | undefined;

/** The native class, or the reason it cannot load here (unsupported platform or architecture). */
export function loadPvRecorder(): PvRecorderClass | Error {
  if (loaded === undefined) {
    try {
      loaded = (createRequire(import.meta.url)('@picovoice/pvrecorder-node') as { PvRecorder: PvRecorderClass }).PvRecorder;
    } catch (caught) {
      loaded = caught instanceof Error ? caught : new Error(String(caught));
    }
  }
  return loaded;
}

function recorderClass(): PvRecorderClass {
  const pv = loadPvRecorder();
  if (pv instanceof Error) throw new MicrophoneError('MIC_BACKEND_UNAVAILABLE', `pvrecorder cannot load on ${process.platform}-${process.arch}: ${pv.message}`, { cause: pv, backend: 'pvrecorder' });
  return pv;
}

export function listPvRecorderDevices(): MicrophoneDevice[] {
  let names: string[];
  try {
    names = recorderClass().getAvailableDevices();
  } catch (caught) {
    throw translate(caught, 'listing devices');
  }
  // pvrecorder opens index -1 as the system default; our list marks none, so selection by index is explicit.
  // ALSA's converter and null plugins are listed beside real inputs; they are left out, and every device
  // keeps pvrecorder's own index, which is what opening it takes.
  return names
    .map((name, index) => ({ index, name, backend: 'pvrecorder' as const, sampleRate: 16_000, channels: 1, isDefault: false }))
    .filter((device) => !isAlsaPlugin(device.name));
}

/**
 * ALSA PCM plugins that pvrecorder lists on Linux but that are no microphone: the null device ("Discard
 * all samples ... or generate zero samples"), the rate converters, the channel and DSP filters, and
 * the jack and oss bridges; the same PCMs the arecord list leaves out. PulseAudio's stays: it is the
 * route to the sound server's inputs.
 */
const ALSA_PLUGINS = [/^Discard all samples/i, /^Rate Converter Plugin/i, /^Plugin for channel (upmix|downmix)/i, /^Plugin using Speex DSP/i, /^JACK Audio Connection Kit$/i, /^Open Sound System$/i];

export function isAlsaPlugin(name: string): boolean {
  return ALSA_PLUGINS.some((pattern) => pattern.test(name));
}

/** pvrecorder always delivers 16 kHz mono PCM16: the wire format, so its frames are sent bit for bit. */
export const PV_FRAME = 320;

/**
 * Starts pvrecorder on the device. When it fails in a way pvrecorder cannot name (no device, no match,
 * failed to initialize), PulseAudio is asked whether it refused us: a refusal also hides the server's
 * devices, leaving only ALSA's, so it looks like either of the others.
 */
export async function openPvRecorder(wanted: string | number | undefined, queue: PushSourceOptions = {}): Promise<PushSource> {
  try {
    const Recorder = recorderClass();
    const devices = listPvRecorderDevices();
    if (devices.length === 0) throw MicrophoneError.noDevice('pvrecorder');
    const index = selectDevice(devices, wanted, 'pvrecorder')?.index ?? -1;
    const failure = await probeOpen(index);
    if (failure !== undefined) throw translate(failure, 'opening the device');
    return startPvRecorder(Recorder, index, queue);
  } catch (caught) {
    if (!(caught instanceof MicrophoneError) || caught.code === 'MIC_BACKEND_UNAVAILABLE' || caught.code === 'MIC_PERMISSION_DENIED') throw caught;
    const refusal = await pulseRefusal();
    if (refusal === undefined) throw caught;
    throw new MicrophoneError('MIC_PERMISSION_DENIED', `microphone access denied: the PulseAudio server refused the connection (pactl: ${refusal}); pvrecorder said: ${caught.message}`, { cause: caught, backend: 'pvrecorder' });
  }
}

/** A failed open in the probe process: named after the native error's class, with its message. */
class ProbeFailure extends Error {
  constructor(
    readonly kind: string,
    message: string,
    /** What the native library wrote to stderr meanwhile (ALSA's probing of absent cards). */
    readonly stderr: string,
  ) {
    super(message);
    this.name = kind === '' ? 'ProbeFailure' : kind;
  }
}

// Runs in a child process: opens and closes the device, prints the outcome as JSON on stdout.
const PROBE = `
const { PvRecorder } = require(process.argv[1]);
try {
  const r = new PvRecorder(Number(process.argv[2]), Number(process.argv[3]), 100);
  r.start(); r.stop(); r.release();
  process.stdout.write(JSON.stringify({ ok: true }));
} catch (e) {
  process.stdout.write(JSON.stringify({ ok: false, kind: e && e.constructor ? e.constructor.name : '', message: String(e && e.message) }));
}`;

/**
 * Opens the device once in a child process first. Where no sound hardware or server exists, ALSA's
 * native probing writes dozens of "ALSA lib ..." lines straight to file descriptor 2, which no
 * JavaScript can catch; in the child they land in a pipe, and the failure comes back as one error.
 * Resolves undefined when the device opened (or when the probe itself could not run: then the open
 * in this process decides).
 */
function probeOpen(index: number): Promise<ProbeFailure | undefined> {
  let modulePath: string;
  try {
    modulePath = createRequire(import.meta.url).resolve('@picovoice/pvrecorder-node');
  } catch {
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['-e', PROBE, modulePath, String(PV_FRAME), String(index)], { timeout: 10_000 }, (error, stdout, stderr) => {
      try {
        const result = JSON.parse(stdout) as { ok: boolean; kind?: string; message?: string };
        resolve(result.ok ? undefined : new ProbeFailure(result.kind ?? '', result.message ?? 'failed to open', stderr));
      } catch {
        resolve(undefined);
      }
    });
    child.on('error', () => resolve(undefined));
  });
}

function startPvRecorder(Recorder: PvRecorderClass, index: number, queue: PushSourceOptions): PushSource {
  let recorder: PvRecorderInstance;
  try {
    // 100 buffered frames: 2 s of slack before the native ring drops audio.
    recorder = new Recorder(PV_FRAME, index, 100);
    recorder.start();
  } catch (caught) {
    throw translate(caught, 'opening the device');
  }
  let stopRequested = false;
  const source = new PushSource(recorder.getSelectedDevice(), { sampleRate: recorder.sampleRate, channels: 1, encoding: 'pcm16' }, () => {
    stopRequested = true;
  }, queue);
  void (async () => {
    let failure: unknown;
    try {
      while (!stopRequested) source.push(await recorder.read());
    } catch (caught) {
      failure = translate(caught, 'reading');
    }
    // Stop at a frame boundary: every frame read was handed on, nothing after it was.
    try {
      recorder.stop();
    } finally {
      recorder.release();
    }
    source.end(failure);
  })();
  return source;
}

function translate(caught: unknown, doing: string): MicrophoneError {
  if (caught instanceof MicrophoneError) return caught;
  const message = caught instanceof Error ? caught.message : String(caught);
  const name = caught instanceof ProbeFailure ? caught.kind : caught instanceof Error ? caught.constructor.name : '';
  if (/permission|denied|not authori[sz]ed/i.test(message)) {
    return new MicrophoneError('MIC_PERMISSION_DENIED', `microphone access denied while ${doing}: ${message}`, { cause: caught, backend: 'pvrecorder' });
  }
  if (doing === 'opening the device' && /Runtime|Backend|InvalidState/.test(name)) {
    return new MicrophoneError('MIC_NO_DEVICE', `no microphone could be opened (no audio server and no capture card?): ${message}`, { cause: caught, backend: 'pvrecorder' });
  }
  return new MicrophoneError('MIC_CAPTURE_FAILED', `microphone failed while ${doing}: ${message}`, { cause: caught, backend: 'pvrecorder' });
}
