import { MicrophoneError } from '../errors.js';
import type { AudioSource } from '../sources/audio-source.js';
import type { MicrophoneBackendName, MicrophoneDevice } from './devices.js';
import { listProcessDevices, openProcessCapture } from './process-backend.js';
import { listPvRecorderDevices, loadPvRecorder, openPvRecorder } from './pvrecorder-backend.js';
import type { Overflow, PushSourceOptions } from './push-source.js';

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
}

/** A capturing microphone: an AudioSource whose deliveredFrames are the frames captured. */
export interface Microphone extends AudioSource {
  readonly backend: MicrophoneBackendName;
  /** Frames captured but dropped because nobody read them in time (see maxQueuedMs); 0 normally. */
  readonly droppedFrames: number;
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
 * MIC_DEVICE_NOT_FOUND, MIC_PERMISSION_DENIED, MIC_BACKEND_UNAVAILABLE or MIC_CAPTURE_FAILED.
 */
export async function openMicrophone(options: MicrophoneOptions = {}): Promise<Microphone> {
  const backend = await resolveBackend(options.backend);
  const queue: PushSourceOptions = {
    ...(options.maxQueuedMs !== undefined ? { maxQueuedMs: options.maxQueuedMs } : {}),
    ...(options.onOverflow !== undefined ? { onOverflow: options.onOverflow } : {}),
  };
  const source =
    backend === 'pvrecorder'
      ? await openPvRecorder(options.device, queue)
      : await openProcessCapture(backend, {
          queue,
          ...(options.device !== undefined ? { device: options.device } : {}),
          ...(options.sampleRate !== undefined ? { sampleRate: options.sampleRate } : {}),
          ...(options.channels !== undefined ? { channels: options.channels } : {}),
        });
  options.signal?.addEventListener('abort', () => void source.stop(), { once: true });
  return Object.assign(source, { backend });
}

async function installed(program: string): Promise<boolean> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve) => {
    const child = execFile(process.platform === 'win32' ? 'where' : 'which', [program], (error) => resolve(error === null));
    child.on('error', () => resolve(false));
  });
}
