import type { CaptureGraph } from './graph.js';

/** What the platform said about one graph's device and context, as plain signals. */
export interface DeviceSignals {
  /** The track ended: the device is gone (unplugged, permission revoked, the browser ended it). */
  ended(): void;
  muted(muted: boolean): void;
  /** The context's state changed ('running', 'suspended', 'interrupted' in Safari, 'closed'). */
  contextState(state: string): void;
  /** navigator.mediaDevices fired devicechange: `present` is whether this graph's device is still listed. */
  devicesChanged(present: boolean): void;
}

/** navigator.mediaDevices as the watch uses it. */
export type DeviceEvents = Pick<MediaDevices, 'addEventListener' | 'removeEventListener' | 'enumerateDevices'>;

/**
 * Listens to the platform for one graph: the track's ended/mute/unmute, the context's statechange,
 * and the device list. The listeners only translate events into signals; the capture decides what
 * each means (Capture's recovery). Returns the function that removes every listener.
 *
 * A device that disappears usually ends its track too; devicechange is watched as well because not
 * every browser ends the track when the device goes (and so that a capture waiting to recover tries
 * again as soon as a device appears).
 */
export function watchDevice(graph: Pick<CaptureGraph, 'context' | 'deviceId'> & { readonly track: MediaStreamTrack | undefined }, devices: DeviceEvents | undefined, signals: DeviceSignals): () => void {
  const removers: Array<() => void> = [];
  const track = graph.track;
  if (track !== undefined) {
    const onEnded = (): void => signals.ended();
    const onMute = (): void => signals.muted(true);
    const onUnmute = (): void => signals.muted(false);
    track.addEventListener('ended', onEnded);
    track.addEventListener('mute', onMute);
    track.addEventListener('unmute', onUnmute);
    removers.push(() => {
      track.removeEventListener('ended', onEnded);
      track.removeEventListener('mute', onMute);
      track.removeEventListener('unmute', onUnmute);
    });
  }
  const context = graph.context;
  if (typeof context.addEventListener === 'function') {
    const onState = (): void => signals.contextState(context.state);
    context.addEventListener('statechange', onState);
    removers.push(() => context.removeEventListener('statechange', onState));
  }
  if (devices !== undefined && typeof devices.addEventListener === 'function') {
    let live = true;
    const onChange = (): void => {
      void listed(devices, graph.deviceId).then((present) => live && signals.devicesChanged(present));
    };
    devices.addEventListener('devicechange', onChange);
    removers.push(() => {
      live = false;
      devices.removeEventListener('devicechange', onChange);
    });
  }
  return () => {
    for (const remove of removers.splice(0)) remove();
  };
}

/** Whether an audio input with this id is listed (true when the id is unknown: nothing to compare). */
export async function listed(devices: Pick<MediaDevices, 'enumerateDevices'>, deviceId: string): Promise<boolean> {
  if (deviceId === '') return true;
  try {
    const all = await devices.enumerateDevices();
    return all.some((d) => d.kind === 'audioinput' && d.deviceId === deviceId);
  } catch {
    return true;
  }
}
