import type { CaptureEvent, CaptureHealth } from '@soundclone/core';

/**
 * The captions screen's words for a microphone's health: a line when something happens to the device
 * (lost, back, changed, suspended, silent), never one per block. Pure: the screen prints what these
 * return, so the wording is tested without a terminal.
 */

/** "FakeMic, 16000 Hz, level -23 dBFS": the device line printed when capture starts or comes back. */
export function deviceLine(health: CaptureHealth): string {
  const device = health.device;
  if (device === null) return 'microphone: none';
  const level = health.level === null ? '' : `, level ${formatDb(health.level.rmsDb)}`;
  return `microphone: ${device.label}, ${String(device.sampleRate)} Hz${device.channels === 1 ? '' : ` ${String(device.channels)} ch`}${level}`;
}

/** The line for an event, or null for events told elsewhere (gaps go through the gap lines). */
export function eventLine(event: CaptureEvent): string | null {
  switch (event.type) {
    case 'device-lost':
      // The same device is taken back when it returns (the recovered line says which came).
      return `device lost (${event.device?.label ?? 'microphone'}: ${event.cause}) — reconnecting to default`;
    case 'device-changed':
      return `device changed: ${event.from?.label ?? 'none'} -> ${event.to.label} at ${String(event.to.sampleRate)} Hz`;
    case 'rate-changed':
      return `device rate changed: ${event.device.label} ${String(event.fromRate)} -> ${String(event.toRate)} Hz`;
    case 'suspended':
      return `device suspended by the system (${event.device?.label ?? 'microphone'}) — waiting for it`;
    case 'starved':
      return `no audio from the microphone (${(event.behindMs / 1000).toFixed(1)} s behind the clock)`;
    case 'recovered':
      return `microphone back: ${event.device.label} at ${String(event.device.sampleRate)} Hz after ${(event.afterMs / 1000).toFixed(1)} s (${event.cause})`;
    case 'failed':
      return `microphone failed: ${event.error.message}`;
    case 'gap':
      return `capture gap: ${((event.gap.to - event.gap.from) / 16_000).toFixed(2)} s missing at sample ${String(event.gap.atSample)} (${event.gap.cause})`;
  }
}

/**
 * "no audio for N s" once per whole second of silence from 2 s on; null otherwise. `lastSecond` is
 * the second this returned last (the caller keeps it), so a snapshot every 250 ms prints once a second.
 */
export function silenceLine(health: CaptureHealth, lastSecond: number): { text: string; second: number } | null {
  const second = Math.floor(health.silentForMs / 1000);
  if (second < 2 || second === lastSecond || health.state === 'stopped' || health.state === 'failed') return null;
  return { text: `no audio for ${String(second)} s`, second };
}

function formatDb(db: number): string {
  return Number.isFinite(db) ? `${db.toFixed(0)} dBFS` : 'silent';
}
