import { MicrophoneError } from '../errors.js';

export type MicrophoneBackendName = 'pvrecorder' | 'parec' | 'arecord' | 'sox';

export interface MicrophoneDevice {
  /** Position in the backend's list: what `device: number` selects. */
  readonly index: number;
  /** What `device: string` matches (exactly, else as a case-insensitive substring). */
  readonly name: string;
  readonly backend: MicrophoneBackendName;
  /** Native format when the backend reports it (PulseAudio does): the rate the session is opened at. */
  readonly sampleRate?: number;
  readonly channels?: number;
  readonly isDefault: boolean;
}

/** Picks a device by index or name; undefined picks the default. */
export function selectDevice(devices: readonly MicrophoneDevice[], wanted: string | number | undefined, backend: MicrophoneBackendName): MicrophoneDevice | undefined {
  if (wanted === undefined) return devices.find((d) => d.isDefault);
  if (typeof wanted === 'number' || /^\d+$/.test(wanted)) {
    const index = Number(wanted);
    const found = devices.find((d) => d.index === index);
    if (found === undefined) throw MicrophoneError.notFound(backend, wanted, devices.map((d) => d.name));
    return found;
  }
  const exact = devices.find((d) => d.name === wanted);
  if (exact !== undefined) return exact;
  const lower = wanted.toLowerCase();
  const matches = devices.filter((d) => d.name.toLowerCase().includes(lower));
  if (matches.length === 0) throw MicrophoneError.notFound(backend, wanted, devices.map((d) => d.name));
  return matches[0];
}
