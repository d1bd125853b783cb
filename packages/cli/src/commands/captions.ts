import { RealtimeError, attachCaptions, isSoundCloneError, type RealtimeFinishResult, type StateChange } from '@soundclone/core';
import { BUNDLED_SAMPLE, openMicrophone, rawPcmSource, stdinSource, transcribeLive, wavFileSource, type AudioSource, type LiveTranscription, type Microphone, type Pace } from '@soundclone/node-mic';
import { oneOf, parse, positiveInt, str } from '../args.js';
import { CaptionScreen } from '../caption-screen.js';
import { deviceLine, eventLine, silenceLine } from '../capture-status.js';
import { HealthLines } from '../session-health-lines.js';
import { CaptionFiles } from '../caption-files.js';
import { GapLines } from '../gap-lines.js';
import { CliUsageError } from '../cli-error.js';
import { connect, openConnection, type Connection } from '../context.js';
import { defaultTitle } from '../session-title.js';
import type { CommandContext } from '../command.js';

export const CAPTIONS_USAGE = `usage: soundclone captions [FILE | - | --mic [DEVICE] | --sample] [options]
  FILE              a WAV file: integer 8/16/24/32-bit or float 32-bit PCM, any rate and channels;
                    or headerless PCM16LE with --raw (see --rate, --channels); - reads stdin (either)
  --mic [DEVICE]    the microphone: the default one, or an index or name from \`soundclone devices\`
  --sample          the bundled LibriVox speech sample
  --pace realtime|fast   files only: as a microphone would (default), or as fast as the session takes
  --raw --rate N --channels N   headerless PCM16LE input (default 16000 Hz mono)
  --backend auto|pvrecorder|parec|arecord|sox   microphone backend (default auto)
  --title TEXT --language CODE
  --vtt FILE --srt FILE   write caption cues live as WebVTT / SRT (a valid file after every cue)
  --hls DIR         write segmented WebVTT and a live HLS playlist (DIR/captions.m3u8)
  --gate            send speech, not silence: a voice gate declares silent stretches as skipped time
                    (not charged; the summary says the share saved)
Ctrl-C or SIGTERM finishes the session (everything captured is sent) and prints the usage and charge.
Audio that could not be sent is reported as gap lines (at most one a second) and in the summary.
When the account's balance is used up the service ends the session: one line says after how much audio
(exit code 1).`;

export async function captions(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parse(ctx.args, {
    mic: { type: 'string' },
    sample: { type: 'boolean', default: false },
    pace: { type: 'string' },
    raw: { type: 'boolean', default: false },
    rate: { type: 'string' },
    channels: { type: 'string' },
    backend: { type: 'string' },
    title: { type: 'string' },
    language: { type: 'string' },
    vtt: { type: 'string' },
    srt: { type: 'string' },
    hls: { type: 'string' },
    gate: { type: 'boolean', default: false },
  });
  if (values.help) return ctx.out.print(CAPTIONS_USAGE), 0;
  const mic = str(values, 'mic');
  const sample = values['sample'] === true;
  const file = sample ? BUNDLED_SAMPLE.path : positionals[0];
  // Exactly one source: --sample with a FILE is refused like any other pair, never one silently ignored.
  if ((mic !== undefined ? 1 : 0) + (sample ? 1 : 0) + positionals.length !== 1) {
    throw new CliUsageError('captions takes one source: FILE, -, --mic [DEVICE] or --sample');
  }
  const pace = oneOf<Pace>(values, 'pace', ['realtime', 'fast']);
  if (mic !== undefined && (pace !== undefined || values['raw'] === true)) throw new CliUsageError('--pace and --raw apply to files; a microphone runs on its own clock');
  const backend = oneOf(values, 'backend', ['auto', 'pvrecorder', 'parec', 'arecord', 'sox'] as const);
  const rate = positiveInt(values, 'rate');
  const channels = positiveInt(values, 'channels');
  const pcm = { ...(rate !== undefined ? { sampleRate: rate } : {}), ...(channels !== undefined ? { channels } : {}) };

  // A file or stdin opens first: a missing file fails before any server or session exists. A
  // microphone opens once the server is ready: its health runs on the clock from the moment it opens,
  // and a session that starts reading only after a local server's start (a second or more: modules,
  // journal, recognizer model) finds it more than its starvation limit behind, so the start of the
  // session is a "starved" capture gap and a discontinuity, just where a person begins to speak. The
  // server's notes wait until the microphone opened, so a missing device is still the one line on stderr.
  let source: AudioSource | undefined;
  let connection: Connection | undefined;
  const drops = new DropRelay();
  // The caption files open first too: a path that cannot be written fails before any session exists.
  const files = new CaptionFiles({ vtt: str(values, 'vtt'), srt: str(values, 'srt'), hls: str(values, 'hls') });
  try {
    if (mic !== undefined) {
      const pending = await openConnection(values, ctx.env, ctx.out);
      connection = pending.connection;
      source = await openMicrophone({ ...(mic !== '' ? { device: mic } : {}), ...(backend !== undefined ? { backend } : {}), ...pcm, onOverflow: (o) => drops.add(o.frames) });
      for (const line of pending.notes) ctx.out.note(line);
      ctx.out.note(`listening on ${source.label} (${(source as { backend?: string }).backend ?? ''}, ${String(source.format.sampleRate)} Hz, ${String(source.format.channels)} ch); Ctrl-C to finish`);
    } else if (file === '-') {
      source = await stdinSource({ type: values['raw'] === true ? 'raw' : 'auto', ...pcm, stream: ctx.stdin });
    } else {
      source = values['raw'] === true ? rawPcmSource(file as string, pcm) : await wavFileSource(file as string);
      ctx.out.note(`captions of ${file as string} (${String(source.format.sampleRate)} Hz, ${String(source.format.channels)} ch)`);
    }
    connection ??= await connect(values, ctx.env, ctx.out);
    const live = await transcribeLive(connection.client, source, {
      ...(pace !== undefined ? { pace } : {}),
      connect: {
        title: str(values, 'title') ?? defaultTitle(mic !== undefined ? 'microphone' : sample ? 'sample' : (file as string)),
        ...(str(values, 'language') !== undefined ? { languageHint: str(values, 'language') as string } : {}),
        ...(values['gate'] === true ? { gate: true } : {}),
      },
    });
    return await show(ctx, live, drops, files, values['gate'] === true);
  } catch (caught) {
    await source?.stop();
    throw caught;
  } finally {
    files.close();
    await connection?.close();
  }
}

async function show(ctx: CommandContext, live: LiveTranscription, drops: DropRelay, files: CaptionFiles, gate: boolean): Promise<number> {
  const { out } = ctx;
  const screen = new CaptionScreen(out);
  const session = live.session;
  // The line drawn in place is the live cue, not the raw partial: a word appears once it is stable,
  // so the terminal does not flicker while the recognizer changes its mind. The same cues go to files.
  const cues = attachCaptions(session);
  cues.on('cue', (change) => {
    if (files.any) files.write(change);
    if (change.kind === 'live') screen.partial(change.cue.text.replace(/\n/gu, ' '));
    else if (change.kind === 'removed') screen.partial('');
  });
  screen.status(`session ${session.sessionId}: ${session.state}`);
  session.on('state', (change) => {
    // Rotations and reconnect attempts get their own, more telling lines below; so does a used-up balance.
    if (change.to === 'rotating' || change.from === 'rotating' || change.to === 'reconnecting') return;
    if (change.reason === 'balance exhausted') return;
    screen.status(stateLine(change));
  });
  session.on('reconnecting', (info) => screen.status(`reconnecting: attempt ${String(info.attempt)} in ${String(info.delayMs)} ms (${info.reason})`));
  session.on('reconnected', (info) => screen.status(`reconnected: server had ${String(info.receivedSamples)} samples, resending ${String(info.resendSamples)}`));
  const health = new HealthLines();
  session.on('health', (h) => {
    const text = health.next(h);
    if (text !== null) screen.status(text);
  });
  session.on('rotated', (info) => screen.status(`rotated: epoch ${String(info.fromEpoch)} -> ${String(info.toEpoch)} at sample ${String(info.atSample)}`));
  const gaps = new GapLines((text) => screen.status(text));
  // Gap positions count the session's wire samples (16 kHz), whatever the source's rate.
  // Audio refused for the balance is told once, by the balance line, not as gap lines.
  session.on('gap', (gap) => {
    if (gap.cause !== 'refused') gaps.add({ cause: gap.cause, seconds: (gap.to - gap.from) / WIRE_RATE });
  });
  drops.listen((frames) => gaps.add({ cause: 'dropped', seconds: frames / live.source.format.sampleRate }));
  const capture = showCaptureHealth(live, screen);
  const subscription = live.captions$.subscribe((event) => {
    if (event.kind === 'partial') return; // drawn from the live cue above
    if (out.json) out.data({ type: 'line', id: event.line.id, text: event.line.text });
    else screen.line(event.line.text);
  });

  // SIGTERM (kill, a service manager, a closing terminal multiplexer) finishes like Ctrl-C: what was
  // captured is sent and charged either way, so the summary is owed either way.
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    interrupts += 1;
    if (interrupts === 1) {
      screen.status(signal === 'SIGINT' ? 'Ctrl-C: finishing the session (Ctrl-C again to quit at once)' : `${signal}: finishing the session (send it again to quit at once)`);
      void live.stop().catch(() => undefined);
    } else {
      process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let result: RealtimeFinishResult | RealtimeError;
  try {
    result = await live.done.catch((caught: unknown) => {
      if (isSoundCloneError(caught, RealtimeError) && caught.code === 'REALTIME_BALANCE_EXHAUSTED') return caught;
      throw caught;
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    subscription.unsubscribe();
    capture.unsubscribe();
    cues.detach();
    files.end();
    gaps.flush();
    screen.end();
  }
  if (isSoundCloneError(result, RealtimeError)) {
    balanceLine(ctx, result);
    return 1;
  }
  summary(ctx, live, result, gaps, gate);
  return 0;
}

function summary(ctx: CommandContext, live: LiveTranscription, result: RealtimeFinishResult, gaps: GapLines, gate: boolean): void {
  const usage = result.session.usage;
  const seconds = live.frames / live.source.format.sampleRate;
  // With --gate: the silence kept off the wire (sent as skipped time), and its share of the audio captured.
  const health = live.session.health;
  const gated = gate ? { skippedSeconds: health.skippedMs / 1000, savedShare: health.savedShare } : undefined;
  if (ctx.out.json) {
    ctx.out.data({ type: 'finished', sessionId: result.session.sessionId, transcriptionId: result.session.transcriptionId, status: result.session.status, capturedFrames: live.frames, droppedFrames: droppedFrames(live.source), lostSeconds: gaps.totalSeconds, lines: result.lines.length, usage, notices: result.notices, ...(gated !== undefined ? { gate: gated } : {}) });
    return;
  }
  ctx.out.print('');
  ctx.out.print(`finished: ${result.session.status}, ${String(result.lines.length)} lines, ${seconds.toFixed(2)} s captured (${String(live.frames)} frames at ${String(live.source.format.sampleRate)} Hz)`);
  ctx.out.print(`usage: ${String(usage.receivedSamples)} samples received, ${String(usage.capturedSamples)} captured, wall time ${(Number(usage.elapsedMs) / 1000).toFixed(1)} s`);
  ctx.out.print(`charge: ${String(usage.billableCharacters)} characters (estimated ${String(usage.estimatedCharacters)})`);
  if (gated !== undefined) ctx.out.print(`gate: saved ${(gated.savedShare * 100).toFixed(1)} % (${gated.skippedSeconds.toFixed(2)} s of silence not sent, not charged)`);
  if (gaps.totalGaps > 0) ctx.out.print(`lost: ${gaps.totalSeconds.toFixed(2)} s of audio in ${String(gaps.totalGaps)} gaps (see the gap lines above)`);
  for (const notice of result.notices) ctx.out.print(`notice ${notice.code}: ${notice.message}`);
}

const WIRE_RATE = 16_000;

/**
 * The service ended the session because the account's balance was used up: one plain line (stdout;
 * with --json one `balance_exhausted` record) saying after how much audio, what it cost, and what to do.
 */
export function balanceLine(ctx: CommandContext, error: RealtimeError): void {
  const received = error.receivedSamples ?? 0;
  const seconds = (received / WIRE_RATE).toFixed(2);
  const charged = error.session?.usage.billableCharacters;
  if (ctx.out.json) {
    ctx.out.data({ type: 'balance_exhausted', code: error.code, receivedSamples: received, seconds: Number(seconds), notAccepted: error.notAccepted ?? null, billableCharacters: charged ?? null, sessionId: error.session?.sessionId ?? null, transcriptionId: error.session?.transcriptionId ?? null });
    return;
  }
  const cost = charged === undefined ? '' : ` (charged ${String(charged)} characters)`;
  ctx.out.print(`balance used up after ${seconds} s of audio${cost}: the session ended and the rest was not transcribed; add characters to the account (a bigger plan or a character order) and start captions again`);
}

/**
 * A session state change in words for people. The session's reasons are for logs ("finish()",
 * "socket closed 1006"); only a failure keeps its reason, since that is the one a person acts on.
 */
export function stateLine(change: StateChange): string {
  switch (change.to) {
    case 'connecting': return 'connecting';
    case 'streaming': return change.from === 'connecting' ? 'streaming' : 'streaming again';
    case 'pausing': return 'pausing';
    case 'paused': return 'paused';
    case 'finishing': return 'finishing: sending the last audio, waiting for the final transcript';
    case 'finished': return 'finished';
    case 'closed': return 'closed';
    case 'failed': return change.reason === '' ? 'failed' : `failed: ${change.reason}`;
    default: return change.to;
  }
}

/** Microphone drops reach the gap lines once they exist; drops before that (while connecting) wait. */
class DropRelay {
  #early: number[] = [];
  #listener: ((frames: number) => void) | undefined;

  add(frames: number): void {
    if (this.#listener === undefined) this.#early.push(frames);
    else this.#listener(frames);
  }

  listen(listener: (frames: number) => void): void {
    this.#listener = listener;
    for (const frames of this.#early.splice(0)) listener(frames);
  }
}

function droppedFrames(source: AudioSource): number {
  return (source as { droppedFrames?: number }).droppedFrames ?? 0;
}

/**
 * A microphone's health on the status line: its device when capture starts and comes back, device
 * loss and recovery as they happen, and "no audio for N s" while it is silent. Files and pipes have none.
 */
function showCaptureHealth(live: LiveTranscription, screen: CaptionScreen): { unsubscribe(): void } {
  const health$ = live.health$;
  const source = live.source as Partial<Microphone>;
  if (health$ === null || source.events$ === undefined) return { unsubscribe: () => undefined };
  let shown = false;
  let lastSecond = -1;
  const healthSub = health$.subscribe((health) => {
    if (!shown && health.level !== null) {
      shown = true;
      screen.status(deviceLine(health));
    }
    const silent = silenceLine(health, lastSecond);
    if (silent !== null) screen.status(silent.text);
    lastSecond = silent?.second ?? (health.silentForMs < 1000 ? -1 : lastSecond);
  });
  const eventSub = source.events$.subscribe((event) => {
    const text = eventLine(event);
    if (text !== null) screen.status(text);
  });
  return {
    unsubscribe: () => {
      healthSub.unsubscribe();
      eventSub.unsubscribe();
    },
  };
}
