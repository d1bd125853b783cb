import { map, merge, type Observable } from 'rxjs';
import type { CaptureHealth, GateOptions, LineUpdate, RealtimeConnectParams, RealtimeFinishResult, RealtimeSocketSession, SessionLine, SoundClone } from '@soundclone/core';
import { sessionStreams } from '@soundclone/core/rx';
import type { AudioSource } from '../sources/audio-source.js';
import type { Microphone } from '../mic/microphone.js';
import { pumpToSession, type Pace, type PumpResult } from './pump.js';

export interface LiveTranscriptionOptions {
  /** Pacing of a source that is not live (default realtime). */
  readonly pace?: Pace;
  /** Session creation and socket options; the sample rate and channels come from the source. */
  readonly connect?: Omit<RealtimeConnectParams, 'sampleRate' | 'channels'>;
  /** finish() budget (default 60 s). */
  readonly finishTimeoutMs?: number;
  /**
   * The voice gate, off by default: `true` for its defaults or core's gate options. In Node it is the
   * session's own gate (the `gate` connect option): core's VoiceGate with the default engine, on the
   * blocks the session encodes from the source, so silence is declared skipped instead of sent
   * (docs/protocol.md "Skipped time"), `speech.start` / `speech.end` come from the session, and
   * `session.stats.skippedSamples` / `session.health.savedShare` say what was saved. No thread to
   * spare here, unlike the browser's audio thread, so there is no second copy of the gate to keep.
   */
  readonly gate?: boolean | GateOptions;
}

/** What a caption display needs, in order: the partial line rewritten, then the line that commits it. */
export type CaptionEvent =
  | { readonly kind: 'partial'; readonly text: string }
  | { readonly kind: 'line'; readonly line: SessionLine };

/**
 * A source streaming into a realtime session. When the source ends (end of file) or stop() is called
 * (Ctrl-C, a stopped microphone), everything captured is sent and the session is finished once:
 * `done` settles with the final lines and the usage. Observables are the core session's
 * (`sessionStreams` of @soundclone/core/rx, one rule each) and complete when it ends.
 */
export class LiveTranscription {
  readonly partials$: Observable<string>;
  readonly lines$: Observable<SessionLine>;
  /** Supplements of lines already emitted: entities, alignment, revision, language. */
  readonly lineUpdates$: Observable<LineUpdate>;
  readonly captions$: Observable<CaptionEvent>;
  readonly done: Promise<RealtimeFinishResult>;
  #pump: Promise<PumpResult>;

  constructor(
    readonly session: RealtimeSocketSession,
    readonly source: AudioSource,
    options: LiveTranscriptionOptions = {},
  ) {
    const streams = sessionStreams(session);
    this.partials$ = streams.partials$.pipe(map((p) => p.text));
    this.lines$ = streams.lines$;
    this.lineUpdates$ = streams.lineUpdates$;
    this.captions$ = merge(
      this.partials$.pipe(map((text): CaptionEvent => ({ kind: 'partial', text }))),
      this.lines$.pipe(map((line): CaptionEvent => ({ kind: 'line', line }))),
    );
    this.#pump = pumpToSession(source, session, options.pace === undefined ? {} : { pace: options.pace });
    const timeout = options.finishTimeoutMs === undefined ? {} : { timeoutMs: options.finishTimeoutMs };
    this.done = this.#pump.then(
      () => session.finish(timeout),
      async (caught: unknown) => {
        // The source failed mid-way: what was captured is still sent and saved, then the failure is reported.
        await session.finish(timeout).catch(() => undefined);
        throw caught;
      },
    );
    this.done.catch(() => undefined);
  }

  /**
   * The capture's health stream when the source is a microphone (state, device, level, "no audio for
   * N s", gaps); null for a file or a pipe.
   */
  get health$(): Observable<CaptureHealth> | null {
    return (this.source as Partial<Microphone>).health$ ?? null;
  }

  /** The capture's health now, or null when the source is not a microphone. */
  get health(): CaptureHealth | null {
    return (this.source as Partial<Microphone>).health ?? null;
  }

  /** Frames the source delivered and the session took so far (final once `done` settled). */
  get frames(): number {
    return this.source.deliveredFrames;
  }

  /** Stops the source; the session then finishes with everything captured. Returns `done`. */
  async stop(): Promise<RealtimeFinishResult> {
    await this.source.stop();
    return this.done;
  }
}

/** Opens a session at the source's native rate and channels and starts streaming into it; stops the source when that fails. */
export async function transcribeLive(client: SoundClone, source: AudioSource, options: LiveTranscriptionOptions = {}): Promise<LiveTranscription> {
  let session: RealtimeSocketSession;
  try {
    session = await client.stt.realtime.connect({
      ...options.connect,
      ...(options.gate !== undefined ? { gate: options.gate } : {}),
      sampleRate: source.format.sampleRate, channels: source.format.channels,
    });
  } catch (caught) {
    // No session to feed: a microphone must not go on capturing into nothing.
    await source.stop();
    throw caught;
  }
  return new LiveTranscription(session, source, options);
}
