import { MicrophoneError } from '../errors.js';
import type { AudioSource } from '../sources/audio-source.js';
import type { MicrophoneBackendName, MicrophoneDevice } from './devices.js';
import { listProcessDevices, openProcessCapture } from './process-backend.js';
import { listPvRecorderDevices, loadPvRecorder, openPvRecorder } from './pvrecorder-backend.js';
import type { Overflow, PushSourceOptions } from './push-source.js';
import { probePulseSource } from './pulse-probe.js';
import { ResilientMicrophone, type CaptureItem, type OpenedCapture, type RecoveryOptions } from './resilient-microphone.js';
import type { Observable } from 'rxjs';
import type { CaptureEvent, CaptureHealth } from '@soundclone/core';

export interface MicrophoneOptions {
  /** Index or name (exact, else a case-insensitive substring) from listMicrophones(); default: the system's. */
  readonly device?: string | number;
  /**
   * `auto` (default): pvrecorder, the native library, wherever its prebuilt library loads; otherwise
   * the first installed capture program of parec, arecord, sox.
   */
  readonly backend?: 'auto' | MicrophoneBackendName;
  /** Capture rate for arecord and sox (they do not report a native rate). Default 48000. */
  readonly sampleRate?: number;
  readonly channels?: number;
  /** Aborting stops the capture like stop(). */
  readonly signal?: AbortSignal;
  /** Captured audio held for a reader that is behind; past it blocks are dropped (droppedFrames). Default 5000 ms. */
  readonly maxQueuedMs?: number;
  /** Told of every dropped block (the reader fell behind by maxQueuedMs). */
  readonly onOverflow?: (overflow: Overflow) => void;
  /**
   * What happens when the device goes away, stalls or changes (README "Capture health"): by default it
   * is re-acquired (the same device when it is back, else the default) and the capture goes on with a
   * recorded gap. `false` or `{ enabled: false }`: a loss ends the capture with MIC_DEVICE_LOST.
   */
  readonly recovery?: RecoveryOptions | false;
  /** The clock health measures with (drift, starvation, times). Default performance.now. */
  readonly now?: () => number;
}

/**
 * A capturing microphone: an AudioSource whose deliveredFrames are the frames captured, over every
 * device it used, with its health and the breaks where a device was lost or changed.
 */
export interface Microphone extends AudioSource {
  readonly backend: MicrophoneBackendName;
  /** Frames captured but dropped because nobody read them in time (see maxQueuedMs); 0 normally. */
  readonly droppedFrames: number;
  /** The capture's health now (state, device, level, drift, gaps). */
  readonly health: CaptureHealth;
  /** Health on every change and every poll (default 250 ms) while capturing; completes when it ends. */
  readonly health$: Observable<CaptureHealth>;
  /** Device lost, changed, rate changed, suspended, starved, recovered, gap, failed. */
  readonly events$: Observable<CaptureEvent>;
  /** Blocks with a break wherever the audio broke (what pumpToSession reads). */
  items(): AsyncGenerator<CaptureItem>;
  /** Moves to another device by the recovery path (a gap, cause device-changed). */
  setDevice(device: string | number): Promise<void>;
}

export async function resolveBackend(backend: MicrophoneOptions['backend'] = 'auto'): Promise<MicrophoneBackendName> {
  if (backend !== 'auto') return backend;
  if (!(loadPvRecorder() instanceof Error)) return 'pvrecorder';
  for (const program of ['parec', 'arecord', 'sox'] as const) {
    if (await installed(program === 'parec' ? 'pactl' : program)) return program;
  }
  throw new MicrophoneError('MIC_BACKEND_UNAVAILABLE', `no capture backend: pvrecorder has no library for ${process.platform}-${process.arch} and none of parec, arecord, sox is installed`);
}

/** Capture devices of the chosen backend. */
export async function listMicrophones(options: Pick<MicrophoneOptions, 'backend'> = {}): Promise<MicrophoneDevice[]> {
  const backend = await resolveBackend(options.backend);
  return backend === 'pvrecorder' ? listPvRecorderDevices() : listProcessDevices(backend);
}

/**
 * Opens a microphone and starts capturing at once. Throws MicrophoneError: MIC_NO_DEVICE,
 * MIC_DEVICE_NOT_FOUND, MIC_PERMISSION_DENIED, MIC_BACKEND_UNAVAILABLE or MIC_CAPTURE_FAILED. Later
 * losses are recovered (see `recovery`); iteration throws MIC_DEVICE_LOST when none came back.
 */
export async function openMicrophone(options: MicrophoneOptions = {}): Promise<Microphone> {
  const backend = await resolveBackend(options.backend);
  const open = async (device: string | number | undefined, onDrop: (frames: number) => void): Promise<OpenedCapture> => {
    const queue: PushSourceOptions = {
      ...(options.maxQueuedMs !== undefined ? { maxQueuedMs: options.maxQueuedMs } : {}),
      onOverflow: (overflow) => {
        onDrop(overflow.frames);
        options.onOverflow?.(overflow);
      },
    };
    return backend === 'pvrecorder'
      ? openPvRecorder(device, queue)
      : openProcessCapture(backend, {
          queue,
          ...(device !== undefined ? { device } : {}),
          ...(options.sampleRate !== undefined ? { sampleRate: options.sampleRate } : {}),
          ...(options.channels !== undefined ? { channels: options.channels } : {}),
        });
  };
  const recovery = options.recovery === false ? { enabled: false } : options.recovery;
  const source = await ResilientMicrophone.open(backend, options.device, {
    open,
    // Only parec names PulseAudio sources; the others open ALSA's or the library's view of them.
    ...(backend === 'parec' ? { probe: probePulseSource } : {}),
    list: () => (backend === 'pvrecorder' ? Promise.resolve(listPvRecorderDevices()) : listProcessDevices(backend)),
    ...(recovery !== undefined ? { recovery } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
  });
  options.signal?.addEventListener('abort', () => void source.stop(), { once: true });
  return source;
}

async function installed(program: string): Promise<boolean> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve) => {
    const child = execFile(process.platform === 'win32' ? 'where' : 'which', [program], (error) => resolve(error === null));
    child.on('error', () => resolve(false));
  });
}
