import { EventEmitter } from 'eventemitter3';
import type { RealtimeSessionEvents } from '../realtime/session-events.js';
import { CaptionEngine } from './caption-engine.js';
import type { CaptionOptions } from './caption-options.js';
import type { CueChange } from './cue.js';

/**
 * The one place partials are heard from: the session event whose payload carries `{ epoch, text }` of
 * the open segment (the session's `partial` event: current epoch only).
 */
const PARTIAL_EVENT = 'partial' as const;
type PartialEvent = typeof PARTIAL_EVENT;

/** The part of a session the binding listens to (a RealtimeSocketSession fits). */
export interface CaptionSource {
  on(event: PartialEvent, fn: RealtimeSessionEvents[PartialEvent]): unknown;
  on(event: 'line', fn: RealtimeSessionEvents['line']): unknown;
  on(event: 'line.updated', fn: RealtimeSessionEvents['line.updated']): unknown;
  on(event: 'state', fn: RealtimeSessionEvents['state']): unknown;
  off(event: PartialEvent, fn: RealtimeSessionEvents[PartialEvent]): unknown;
  off(event: 'line', fn: RealtimeSessionEvents['line']): unknown;
  off(event: 'line.updated', fn: RealtimeSessionEvents['line.updated']): unknown;
  off(event: 'state', fn: RealtimeSessionEvents['state']): unknown;
}

export interface AttachCaptionsOptions extends CaptionOptions {
  /** The clock stability by time is measured on (default `Date.now`). */
  readonly now?: () => number;
  /** Timer functions for waking when a word turns stable by age (default the global ones). */
  readonly setTimeout?: (fn: () => void, ms: number) => unknown;
  readonly clearTimeout?: (handle: unknown) => void;
}

export interface CaptionEvents {
  /** One decision of the engine: a live cue, a final cue, a revision or a removal. */
  cue: (change: CueChange) => void;
}

/** Live captions of one session: `cue` events, the engine's state, and `detach()`. */
export interface AttachedCaptions extends Pick<EventEmitter<CaptionEvents>, 'on' | 'off' | 'once'> {
  readonly engine: CaptionEngine;
  /** Stops listening to the session and clears the timer; the engine keeps its cues. */
  detach(): void;
}

/**
 * Feeds a session's partials, lines and line updates into a CaptionEngine and emits its decisions as
 * `cue` events. When the session reaches a terminal state the engine is ended (every cue settled).
 */
export function attachCaptions(session: CaptionSource, options: AttachCaptionsOptions = {}): AttachedCaptions {
  const { now = Date.now, setTimeout: set = (fn, ms) => globalThis.setTimeout(fn, ms), clearTimeout: clear = (h) => globalThis.clearTimeout(h as ReturnType<typeof globalThis.setTimeout>), ...engineOptions } = options;
  const engine = new CaptionEngine(engineOptions);
  const emitter = new EventEmitter<CaptionEvents>();
  let timer: unknown;
  let detached = false;

  let ended = false;
  const apply = (changes: readonly CueChange[]): void => {
    for (const change of changes) emitter.emit('cue', change);
    if (timer !== undefined) clear(timer);
    timer = undefined;
    const wake = engine.nextWakeMs();
    if (wake !== null && !detached) timer = set(() => {
      timer = undefined;
      apply(engine.tick(now()));
    }, Math.max(0, wake - now()));
  };
  const onPartial = (m: { readonly epoch: number; readonly text: string }): void => {
    if (!ended) apply(engine.partial({ epoch: m.epoch, text: m.text }, now()));
  };
  const onLine: RealtimeSessionEvents['line'] = (line) => {
    if (!ended) apply(engine.line(line));
  };
  const onUpdate: RealtimeSessionEvents['line.updated'] = (update) => {
    if (!ended) apply(engine.lineUpdated(update.line));
  };
  // Lines of the final view are emitted before the terminal state, so ending here loses none.
  const onState: RealtimeSessionEvents['state'] = (change) => {
    if (ended || (change.to !== 'finished' && change.to !== 'failed' && change.to !== 'closed')) return;
    ended = true;
    apply(engine.end());
  };
  session.on(PARTIAL_EVENT, onPartial);
  session.on('line', onLine);
  session.on('line.updated', onUpdate);
  session.on('state', onState);

  return {
    engine,
    on: emitter.on.bind(emitter),
    off: emitter.off.bind(emitter),
    once: emitter.once.bind(emitter),
    detach(): void {
      if (detached) return;
      detached = true;
      session.off(PARTIAL_EVENT, onPartial);
      session.off('line', onLine);
      session.off('line.updated', onUpdate);
      session.off('state', onState);
      if (timer !== undefined) clear(timer);
      timer = undefined;
    },
  };
}
