import type { RealtimeSocketSession, SessionState } from '@soundclone/core';
import { isWireFormat, type AudioBlock, type AudioSource } from '../sources/audio-source.js';
import type { CaptureItem } from '../mic/resilient-microphone.js';

/**
 * How a source that is not live (a file, a pipe) is paced: `realtime` writes each block when its time
 * comes, as a microphone would; `fast` writes as fast as the session accepts, i.e. while its
 * retained buffer is under half full, so nothing is dropped from the ring however slow the network.
 * Live sources are never paced: they have their own clock.
 */
export type Pace = 'realtime' | 'fast';

export interface PumpOptions {
  readonly pace?: Pace;
  readonly signal?: AbortSignal;
}

export interface PumpResult {
  /** Frames at the source's rate written to the session, the source's deliveredFrames. */
  readonly frames: number;
  /** Why it stopped: the source ended (or was stopped), or the session stopped taking audio. */
  readonly ended: 'source' | 'session';
}

const TERMINAL: readonly SessionState[] = ['finishing', 'finished', 'failed'];

/**
 * Writes every block of a source into a session opened at the source's rate and channels: 16 kHz mono
 * PCM16 with writePcm16 (bit for bit), anything else (Float32 or Int16) through write(), where the
 * core's one resampler and downmix run.
 */
export async function pumpToSession(source: AudioSource, session: RealtimeSocketSession, options: PumpOptions = {}): Promise<PumpResult> {
  let wire = isWireFormat(source.format);
  const pace: Pace | 'none' = source.live ? 'none' : (options.pace ?? 'realtime');
  const { sampleRate } = source.format;
  let channels = source.format.channels;
  const started = performance.now();
  let frames = 0;
  const onAbort = (): void => void source.stop();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const item of itemsOf(source)) {
      if (item.kind === 'break') {
        // A lost or changed device: nothing before the break mixes with what follows, and the session
        // takes the new device's rate and channels (core: setInputFormat at a discontinuity).
        session.markDiscontinuity();
        if (!isWireFormat(item.format)) session.setInputFormat({ sampleRate: item.format.sampleRate, channels: item.format.channels });
        wire = isWireFormat(item.format);
        channels = item.format.channels;
        continue;
      }
      const block = item.block;
      if (!(await writeBlock(session, wire, block))) {
        await source.stop();
        return { frames, ended: 'session' };
      }
      frames += block.length / channels;
      if (pace === 'realtime') await sleep(started + (frames * 1000) / sampleRate - performance.now());
      else if (pace === 'fast') await roomIn(session, options.signal);
    }
    return { frames, ended: 'source' };
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** A source that can break (a microphone) gives its items; any other gives its blocks as audio items. */
async function* itemsOf(source: AudioSource): AsyncGenerator<CaptureItem> {
  const withBreaks = source as AudioSource & { items?: () => AsyncIterable<CaptureItem> };
  if (typeof withBreaks.items === 'function') {
    yield* withBreaks.items();
    return;
  }
  for await (const block of source) yield { kind: 'audio', block };
}

/** Writes one block, waiting through a pause; false when the session no longer takes audio. */
async function writeBlock(session: RealtimeSocketSession, wire: boolean, block: AudioBlock): Promise<boolean> {
  for (;;) {
    // Int16 at another rate or channel count goes to write() as it is: the resampler reads it as
    // value / 32768 while copying it into its history, so no Float32 copy is made here.
    const taken = wire ? session.writePcm16(block as Int16Array) : session.write(block);
    if (taken > 0) return true;
    if (TERMINAL.includes(session.state)) return false;
    await nextEvent(session, 'state', 1000);
  }
}

/** A fast source waits for room (core's pacing), so it never overflows the session's buffer on a healthy socket. */
async function roomIn(session: RealtimeSocketSession, signal: AbortSignal | undefined): Promise<void> {
  // A session that failed or was closed is seen by the next write (it takes nothing): no need to throw here.
  await session.whenWritable(signal !== undefined ? { signal } : {}).catch(() => undefined);
}

function nextEvent(session: RealtimeSocketSession, name: 'state', timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      session.off(name, done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    session.once(name, done);
  });
}

function sleep(ms: number): Promise<void> {
  return ms <= 1 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}
