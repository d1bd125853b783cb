import { ValidationError } from '../../errors/client-errors.js';
import { FRAME, REALTIME } from '../../protocol.js';
import { VoiceGate, VOICE_GATE_DEFAULTS, type VoiceGateDecision } from '../../dsp/voice-gate.js';
import type { VoiceDetector } from '../../dsp/voice-detector.js';

/**
 * The `gate` option of a session: `true` for the defaults (VOICE_GATE_DEFAULTS, chosen on `pnpm
 * bench:vad`), or the fields to change. Off by default.
 */
export interface GateOptions {
  /** Audio sent from before the first speech frame of an utterance, ms (0-10000). Default 400. */
  readonly preRollMs?: number;
  /** Audio still sent after the last speech frame, ms (0-10000). Default 300. */
  readonly hangoverMs?: number;
  /**
   * Non-speech after the last speech frame before the utterance ends (`speech.end`) and the server
   * commits the open line, ms (at least hangoverMs, at most 10000). Default 800.
   */
  readonly commitAfterMs?: number;
  /** The engine, made for 16 kHz (the session gates the 16 kHz audio it encodes). Default: an EnergyVoiceDetector. */
  readonly detector?: VoiceDetector;
}

/** An utterance edge the gate found, at a captured 16 kHz position (the session's sample positions). */
export interface SpeechEdge {
  readonly event: 'speech.start' | 'speech.end';
  readonly sample: number;
}

/**
 * What one step of the gate (10 ms of audio) decided: captured [decided, skipTo) is skipped time,
 * [skipTo, sendTo) is sent (both equal to the decided position when nothing was decided); and the
 * utterance edges it found, in order. The same object every step: read it before the next.
 */
export interface GateStep {
  skipTo: number;
  sendTo: number;
  edges: SpeechEdge[] | null;
}

const GATE_FIELDS = ['preRollMs', 'hangoverMs', 'commitAfterMs', 'detector'] as const;

/** The gate option as given, checked: null when off. A ValidationError lists every broken field (`gate.preRollMs`, …). */
export function gateOptions(option: unknown): GateOptions | null {
  if (option === undefined || option === false) return null;
  if (option === true) return {};
  const violations: Array<{ field: string; rule: string }> = [];
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    throw new ValidationError([{ field: 'gate', rule: 'must be true, false or an object { preRollMs?, hangoverMs?, commitAfterMs?, detector? }' }]);
  }
  const o = option as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!(GATE_FIELDS as readonly string[]).includes(key) && o[key] !== undefined) violations.push({ field: `gate.${key}`, rule: 'is not a gate option' });
  for (const field of ['preRollMs', 'hangoverMs', 'commitAfterMs'] as const) {
    const v = o[field];
    if (v !== undefined && !(typeof v === 'number' && v >= 0 && v <= 10_000)) violations.push({ field: `gate.${field}`, rule: `must be a number of milliseconds in [0, 10000], got ${String(v)}` });
  }
  const hangover = (o['hangoverMs'] as number | undefined) ?? VOICE_GATE_DEFAULTS.hangoverMs;
  const commit = (o['commitAfterMs'] as number | undefined) ?? VOICE_GATE_DEFAULTS.commitAfterMs;
  if (typeof hangover === 'number' && typeof commit === 'number' && commit < hangover) violations.push({ field: 'gate.commitAfterMs', rule: `must be at least hangoverMs (${hangover}), got ${commit}` });
  const detector = o['detector'] as Partial<VoiceDetector> | undefined;
  if (detector !== undefined && (typeof detector !== 'object' || detector === null || typeof detector.isSpeech !== 'function' || typeof detector.reset !== 'function' || !Number.isInteger(detector.frameLength) || (detector.frameLength ?? 0) < 1)) {
    violations.push({ field: 'gate.detector', rule: 'must be a VoiceDetector: { frameLength, isSpeech(frame), reset() }' });
  }
  if (violations.length > 0) throw new ValidationError(violations);
  return o as GateOptions;
}

/** Samples the gate is given at a time: 10 ms, so its decisions follow the audio closely. */
const CHUNK = REALTIME.sampleRate / 100;

/**
 * The session's voice gate: a VoiceGate (dsp/voice-gate.ts) over the 16 kHz audio the outbox encodes,
 * so whatever the writer gives (any rate, channels, Float32 or PCM16, any block length) it decides on
 * the very samples that would be sent, in the session's own positions. It reads them back from the
 * outbox's frame slots, which hold every sample until the server acknowledged it, so the gate keeps no
 * audio of its own: the pre-roll is audio the outbox holds back until the gate decides.
 *
 * It decides and returns: step() takes the next 10 ms (one detector frame of the default engine, so
 * one decision is one pair of ranges) and returns a GateStep, which the session applies to the outbox
 * (decide()) and whose edges it emits. While the gate is closed, audio older than its history
 * (pre-roll plus one detector frame) can no longer become pre-roll: it is skipped time.
 *
 * Garbage: none per step in the steady state (fixed scratch arrays, one reused step); an edge makes
 * its object, and end() a view of the last partial chunk.
 */
export class SessionGate {
  readonly #gate: VoiceGate;
  readonly #pcm = new Int16Array(CHUNK);
  readonly #float = new Float32Array(CHUNK);
  readonly #step: GateStep = { skipTo: 0, sendTo: 0, edges: null };
  /** Captured position of the gate's position 0. */
  readonly #base: number;
  /** Captured position up to which the gate was given audio. */
  #fed: number;
  /** Captured position the gate's decisions reached (what the outbox was told). */
  #decided: number;

  constructor(options: GateOptions, base: number) {
    this.#gate = new VoiceGate({ sampleRate: REALTIME.sampleRate, ...options });
    this.#base = this.#fed = this.#decided = base;
  }

  /** Whether the gate sends the audio that follows (an utterance is open or in its hangover). */
  get open(): boolean {
    return this.#gate.isOpen;
  }

  /**
   * The next 10 ms of what was written (`produced`: the outbox's end), or null when less is there (it
   * waits for the next write). `peek` copies held 16 kHz samples (AudioOutbox.peek).
   */
  step(produced: number, peek: (from: number, out: Int16Array) => number): GateStep | null {
    if (produced - this.#fed < CHUNK) return null;
    peek(this.#fed, this.#pcm);
    this.#fed += CHUNK;
    return this.#apply(this.#gate.process(this.#toFloat(CHUNK)), this.#begin());
  }

  /**
   * The stream stops (pause, finish), after step() returned null: the last partial chunk goes through
   * the gate, which then ends an utterance still open (its `speech.end`). Everything after the step's
   * sendTo up to `produced` is skipped time then: the caller declares it (decide(produced, produced)).
   * After a pause the gate goes on with the next audio, positions counting on.
   */
  end(produced: number, peek: (from: number, out: Int16Array) => number): GateStep {
    const step = this.#begin();
    const rest = produced - this.#fed;
    if (rest > 0) {
      peek(this.#fed, this.#pcm.subarray(0, rest));
      this.#fed += rest;
      this.#apply(this.#gate.process(this.#toFloat(rest).subarray(0, rest)), step);
    }
    const d = this.#gate.finish();
    if (d.speechEnd >= 0) (step.edges ??= []).push({ event: 'speech.end', sample: this.#base + d.speechEnd });
    if (produced > this.#decided) this.#decided = produced;
    return step;
  }

  #begin(): GateStep {
    const step = this.#step;
    step.skipTo = step.sendTo = this.#decided;
    step.edges = null;
    return step;
  }

  #toFloat(n: number): Float32Array {
    const pcm = this.#pcm;
    const out = this.#float;
    for (let i = 0; i < n; i++) out[i] = pcm[i]! / 32768;
    return out;
  }

  /** One decision of the VoiceGate into the step, in captured positions. */
  #apply(d: VoiceGateDecision, step: GateStep): GateStep {
    const base = this.#base;
    if (d.speechEnd >= 0) (step.edges ??= []).push({ event: 'speech.end', sample: base + d.speechEnd });
    if (d.speechStart >= 0) (step.edges ??= []).push({ event: 'speech.start', sample: base + d.speechStart });
    // Skipped time keeps to the 20 ms grid (FRAME.skipGridSamples): what is sent is rounded outwards.
    if (d.sendTo > d.sendFrom) {
      // Skipped up to the pre-roll's start (never back over what was declared already), then sent;
      // when the gate closed in this step, sent up to the grid after its hangover.
      step.skipTo = Math.max(gridFloor(base + d.sendFrom), this.#decided);
      const sendTo = Math.max(base + d.sendTo, step.skipTo);
      step.sendTo = this.#gate.isOpen ? sendTo : gridCeil(sendTo);
      this.#decided = step.sendTo;
    } else if (!this.#gate.isOpen) {
      // Closed: audio older than the history can no longer become pre-roll.
      const settled = gridFloor(this.#fed - this.#gate.historySamples);
      // (The decided position is on the grid here, except after end(): a pause, where the server
      // commits the open segment anyway.)
      if (settled > this.#decided) step.skipTo = step.sendTo = this.#decided = settled;
    }
    return step;
  }
}

const GRID = FRAME.skipGridSamples;

function gridFloor(position: number): number {
  return position - (position % GRID);
}

function gridCeil(position: number): number {
  const rest = position % GRID;
  return rest === 0 ? position : position + GRID - rest;
}
