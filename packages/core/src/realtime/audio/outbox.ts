import { FrameEncoder, type EncodedFrame } from '../../dsp/frame-encoder.js';
import type { ResamplerKernel, SampleBlock } from '../../dsp/resampler.js';
import { encodeSkipFrame, FRAME, REALTIME } from '../../protocol.js';
import { GapLedger, NO_GAPS, type Gap } from './gap-ledger.js';
import { SkipLedger } from './skip-ledger.js';
import { RealtimeError } from '../../errors/realtime-error.js';
import { checkBlockFits, checkFloatBlock, checkPcm16Block, ownRealm } from './write-input.js';

export type { Gap } from './gap-ledger.js';

/** Backpressure and memory, as numbers a UI can draw (bounded and observable). */
export interface AudioStats {
  /** Samples captured and encoded so far (16 kHz): the capturedSamples pause and finish report. */
  readonly producedSamples: number;
  /** End of the last frame handed to the socket. */
  readonly sentSamples: number;
  /** The server's received cursor, from its last acknowledgement. */
  readonly ackedSamples: number;
  /** Sent but not acknowledged. */
  readonly unackedSamples: number;
  /** Encoded but not sent yet. */
  readonly queuedSamples: number;
  /** Held in the frame slots: everything not acknowledged (queued + unacked). */
  readonly bufferedSamples: number;
  readonly capacitySamples: number;
  /** Samples lost to overflow since the session began. */
  readonly overflowSamples: number;
  /** Captured samples declared as gaps (the server will never get them): capturedSamples - receivedSamples at finish. */
  readonly gapSamples: number;
  /**
   * Captured samples sent as skipped time (skip frames, each once): the silence a voice gate kept off
   * the wire (docs/protocol.md "Skipped time"). 0 without a gate, or with a server that takes no skip frames.
   */
  readonly skippedSamples: number;
  /** producedSamples - ackedSamples in milliseconds of audio. */
  readonly lagMs: number;
  /** The resampler kernel write() runs: 'wasm', or 'js' (asked for, or no WebAssembly SIMD / a CSP without 'wasm-unsafe-eval'). */
  readonly resamplerKernel: 'js' | 'wasm';
}

/** What write() takes: the rate and interleaved channels of its blocks, and which resampler kernel runs. */
export interface InputFormat {
  readonly sampleRate: number;
  /** Interleaved channels, averaged to mono. Default 1. */
  readonly channels?: number;
  /** Default 'auto': the wasm kernel where it can run, else js (same rates, same quality). */
  readonly kernel?: ResamplerKernel;
}

/** A skip still growing (a gate in silence) is declared in steps of this many samples (0.5 s), not per write. */
const SKIP_STEP_SAMPLES = REALTIME.sampleRate / 2;

/**
 * The audio on its way out. Every sample the server has not acknowledged is held here, and it is held
 * frame-shaped: the outbox's FrameEncoder (dsp/frame-encoder.ts, the public encode path) writes the
 * 16 kHz PCM16 straight into the payloads of socket-ready frame slots (16 bytes of header room, then one
 * frame), and a slot that is full gets its header and goes to send() as it is. The slot is the retained
 * copy and the frame at once. The encoder encodes and keeps; the outbox decides what is owed: it frees
 * slots on acknowledgement, resends from the server's cursor and declares gaps.
 *
 *   write(Float32 | Int16) ─► FrameEncoder: Resampler.processPcm16Runs ─► frame slots ──nextFrame()──► socket
 *   writePcm16(Int16) ──────────────────────── copied in ───────────────┘   ▲ acknowledge(received) frees whole slots,
 *                                                                             rewindTo(received) sends them again
 *
 * Copies per sample after the caller's block: the resampler's history (it needs its input in its own
 * memory, and downmixes, converts int16 and zeroes non-finite samples on the way), then the slot. With
 * the wasm kernel the slots live in its memory and it quantizes into them; with the js kernel its floats
 * pass through a small chunk and are quantized into them. writePcm16 copies into the slot once.
 *
 * This is the one encode path of the shipping writers: a browser capture declares its AudioContext's
 * rate here (setInput) and writes its blocks as they come; endSegment() is its break in the audio.
 *
 * Positions here are captured positions (the slots'); `acknowledge()` and `rewindTo()` take the server's
 * and frames carry the server's (see GapLedger). `expected` is where the server's next sample must
 * start. When the slots ran out and the oldest audio the server never got was dropped (overflow during
 * a long outage: whole slots go), that range is declared a gap and not sent: no invented samples; the
 * next frame continues at the server's cursor, so the finish's capturedSamples exceeds receivedSamples by
 * exactly the gaps (TRANSPORT_GAP). A pause or finish sends the open slot short and seals it; audio after
 * it starts the next slot.
 *
 * Why slots are reused only once acknowledged, not after send(): a WebSocket may keep the very bytes
 * it was given after send() returns. `ws` copies a binary message while masking it only when it can send
 * at once; when its sender is busy (a permessage-deflate compression or a Blob read in progress) it
 * queues the caller's buffer, and when the random mask is all zeros it writes the caller's buffer to the
 * TCP socket unmasked, by reference, until flushed (ws lib/sender.js `frame()` and `send()`). A browser
 * copies the bytes in send(). Bytes the server has acknowledged were sent and received, by any
 * implementation, so overwriting them can never corrupt a message. An overflow is the one exception: it
 * drops the oldest slot after bufferMs of audio went unacknowledged, sent or not.
 *
 * Garbage: none per frame or write in the steady state. The constructor and setInput() allocate; so do
 * a block longer than 8192 frames (split into views), a short frame (pause, finish: a subarray view)
 * and a resend from a server cursor inside a slot (one fresh frame).
 */
export class AudioOutbox {
  readonly frameSamples: number;
  readonly #encoder: FrameEncoder;
  #format: Required<InputFormat>;
  #mode: 'float' | 'pcm16' | undefined;
  /** Float input went into the resampler since the last segment end: endSegment() has a tail to encode. */
  #segmentOpen = false;
  #acked: number;
  /** The server's last acknowledged cursor, in its own positions. */
  #ackedServer: number;
  #expected: number;
  readonly #gaps: GapLedger;
  /** Gaps declared and not yet taken (takeGaps()). */
  #news: Gap[] = [];
  /** Captured time a voice gate decided not to send (decide()). */
  readonly #skips = new SkipLedger();
  /**
   * With a gate (gate()): where its decisions reached. Audio from here on is held, neither sent nor
   * skipped yet: the gate may still send it as pre-roll. +Infinity without a gate.
   */
  #decided = Number.POSITIVE_INFINITY;
  /** The current socket's server takes skip frames (its session.ready listed them). */
  #skipFrames = false;
  /** Send the skip still growing at once (an utterance ended: the server commits its line at the skip). */
  #skipNow = false;
  /** End of the furthest skip frame sent, and the samples they covered, each once. */
  #skipSentUntil = 0;
  #skipSent = 0;

  constructor(options: { sampleRate: number; channels: number; bufferMs: number; startSample?: number; frameMs?: number }) {
    this.#gaps = new GapLedger();
    const startSample = options.startSample ?? 0;
    this.#format = { sampleRate: options.sampleRate, channels: options.channels, kernel: 'auto' };
    this.#encoder = new FrameEncoder({
      inputRate: options.sampleRate, channels: options.channels, bufferMs: options.bufferMs, frameMs: options.frameMs, startSample,
    });
    this.frameSamples = this.#encoder.frameSamples;
    this.#acked = startSample;
    this.#ackedServer = startSample;
    this.#expected = startSample;
  }

  /** Frame slots: fixed for the session's life (bufferMs and the largest write decide how many). */
  get frameBuffers(): number {
    return this.#encoder.slotCount;
  }

  /** Samples the slots hold at most (bufferMs, rounded up to whole slots, plus room for one write). */
  get capacity(): number {
    return this.#encoder.capacity;
  }

  /** Samples bufferMs keeps (whole slots): the most one write may add. */
  get keptSamples(): number {
    return this.#encoder.keptSamples;
  }

  /** Samples a write can add now without dropping audio the server has not acknowledged. */
  get writableSamples(): number {
    // Acknowledged samples of the open slot stay in it until it is sealed; they are not owed any more.
    const encoder = this.#encoder;
    return Math.max(0, encoder.keptSamples - (encoder.producedSamples - Math.max(encoder.releaseCursor, this.#acked)));
  }

  /** Copies the encoded samples [from, from + out.length) still held into `out`; returns how many (for checks). */
  peek(from: number, out: Int16Array): number {
    return this.#encoder.peek(from, out);
  }

  /**
   * Declares what write() takes, in place of the constructor's rate and channels: for a writer that
   * learns its rate only when it starts (a browser capture runs at its AudioContext's rate), or whose
   * device came back at another rate. The same format again changes nothing. A different one is taken
   * whenever no resampler segment is open: before any audio, or right after endSegment() (a
   * discontinuity). With a segment open the resampler holds input the new format never saw, so that
   * is refused (REALTIME_INVALID_STATE): end the segment first.
   *
   * The resampler is rebuilt; the encoded audio is not touched: every slot the server has not
   * acknowledged moves into the new resampler's memory as it is (same positions, same bytes), and
   * the send cursor stays where it was, so frames continue and a rewindTo() after a reconnect resends
   * the same bytes. Allocates (a new resampler and one copy of the retained audio): a device change,
   * not a hot path.
   */
  setInput(format: InputFormat): void {
    const next: Required<InputFormat> = { sampleRate: format.sampleRate, channels: format.channels ?? 1, kernel: format.kernel ?? 'auto' };
    const now = this.#format;
    if (next.sampleRate === now.sampleRate && next.channels === now.channels && next.kernel === now.kernel) return;
    if (this.#segmentOpen) {
      throw new RealtimeError('REALTIME_INVALID_STATE', `the input format (${now.sampleRate} Hz, ${now.channels} channel(s)) cannot change inside a segment; mark a discontinuity before switching to ${next.sampleRate} Hz, ${next.channels} channel(s)`);
    }
    // A format the resampler refuses throws before anything changes: the outbox stays as it was.
    this.#encoder.setInput(next.sampleRate, next.channels, next.kernel);
    this.#format = next;
  }

  get produced(): number {
    return this.#encoder.producedSamples;
  }

  /** The rate and channels write() takes now. */
  get inputFormat(): { readonly sampleRate: number; readonly channels: number } {
    return this.#format;
  }

  /** Whether PCM16 at 16 kHz (writePcm16) is what was written last. */
  get writesPcm16(): boolean {
    return this.#mode === 'pcm16';
  }

  get acked(): number {
    return this.#acked;
  }

  /** The server's last acknowledged cursor, in the server's positions (what rewindTo() takes). */
  get ackedServer(): number {
    return this.#ackedServer;
  }

  /** Where the next frame starts (the server's cursor as far as we know). */
  get expected(): number {
    return this.#expected;
  }

  /** Samples not yet handed to the socket (a gap not declared yet included). */
  get unsent(): number {
    return this.produced - this.#expected;
  }

  /** Audio sent and not acknowledged, in samples (gaps are never in flight; skipped time carries no audio). */
  get inFlight(): number {
    return this.#gaps.toServer(this.#expected) - this.#ackedServer - this.#skips.within(this.#acked, this.#expected);
  }

  // --- the voice gate's decisions (docs/protocol.md "Skipped time") ---

  /**
   * A voice gate decides from now on: audio written after this is held until decide() says to send or
   * skip it. Audio already written is decided (sent as ever).
   */
  gate(): void {
    if (this.#decided === Number.POSITIVE_INFINITY) this.#decided = this.produced;
  }

  /** Whether a gate decides what is sent. */
  get gated(): boolean {
    return this.#decided !== Number.POSITIVE_INFINITY;
  }

  /** With a gate: where its decisions reached (audio from here on is held). */
  get decided(): number {
    return this.#decided;
  }

  /**
   * The gate decided on captured [decided, sendTo): [decided, skipTo) is skipped time, [skipTo, sendTo)
   * is sent. Positions only grow; `sendTo` may run ahead of what was written (the resampler's latency):
   * frames go out as it comes.
   */
  decide(skipTo: number, sendTo: number): void {
    const from = this.#decided;
    if (!(skipTo >= from && sendTo >= skipTo)) {
      throw new RealtimeError('REALTIME_INVALID_STATE', `a gate decision must move forward: skip to ${skipTo}, send to ${sendTo}, decided until ${from}`);
    }
    this.#skips.add(from, skipTo);
    this.#decided = sendTo;
  }

  /** The skip still growing goes out at once, however short (the end of an utterance). */
  sendSkipNow(): void {
    this.#skipNow = true;
  }

  /**
   * Whether the current socket's server takes skip frames: set on every session.ready. Without them a
   * skipped stretch is sent as the audio the slots hold for it (captured audio, or the zeros a source
   * that gates itself stands in with), so the timeline stays true and only the saving is lost.
   */
  set skipFrames(value: boolean) {
    this.#skipFrames = value;
  }

  /** Captured ranges declared lost so far, merged. */
  get gaps(): ReadonlyArray<readonly [number, number]> {
    return this.#gaps.ranges;
  }

  /** A captured position in the server's stream. */
  toServer(captured: number): number {
    return this.#gaps.toServer(captured);
  }

  /**
   * Float32, or PCM16 (read as value / 32768 inside the resampler, no float copy), at the session's
   * declared rate and channels. Returns the 16 kHz samples it added.
   */
  writeFloat(input: SampleBlock): number {
    const block = this.checkFloat(input);
    if (this.#mode !== 'float') this.#setMode('float');
    // DSP_INVALID_STATE after the stream was flushed, before anything is taken.
    const produced = this.#encoder.write(block);
    this.#segmentOpen = true;
    return produced;
  }

  /** PCM16 at 16 kHz mono: copied into the slots as it is, bit-exact (no resampling, no requantisation). */
  writePcm16(samples: Int16Array): number {
    this.checkPcm16(samples);
    if (this.#mode !== 'pcm16') this.#setMode('pcm16');
    return this.#encoder.writePcm16(samples);
  }

  /**
   * What writeFloat() refuses, checked without taking anything (DSP_INVALID_BUFFER for a wrong type or
   * a partial frame, REALTIME_WRITE_TOO_LARGE for a block bufferMs cannot hold): the session checks a
   * block it does not take too, so a bad one is an error whatever the state. Returns the block as this
   * realm's typed array (a worklet's or an iframe's is viewed, not copied: the resampler checks with
   * instanceof).
   */
  checkFloat(input: unknown): SampleBlock {
    const format = this.#format;
    // The hot path (an AudioWorklet's 128 frames, many times a second) pays two instanceof checks and
    // a multiplication; the full checks run only for what may fail them.
    let block: SampleBlock;
    if (input instanceof Float32Array || input instanceof Int16Array) block = input;
    else {
      checkFloatBlock(input, format.channels);
      block = ownRealm(input as SampleBlock);
    }
    if (format.channels !== 1 && block.length % format.channels !== 0) checkFloatBlock(block, format.channels);
    const frames = block.length / format.channels;
    const kept = this.#encoder.keptSamples;
    if ((frames * REALTIME.sampleRate) / format.sampleRate + 2 > kept) {
      checkBlockFits('write', this.#encoder.outputCountFor(frames), kept, REALTIME.sampleRate);
    }
    return block;
  }

  /** What writePcm16() refuses, checked without taking anything (see checkFloat). */
  checkPcm16(samples: unknown): void {
    if (!(samples instanceof Int16Array)) checkPcm16Block(samples); // the full check only off the hot path
    checkBlockFits('writePcm16', (samples as Int16Array).length, this.#encoder.keptSamples, REALTIME.sampleRate);
  }

  /** Encodes what the resampler still holds and ends the stream (finish). A PCM16-only session has nothing there. */
  flushResampler(): void {
    if (this.#mode === 'float') this.#encoder.flush();
    this.#segmentOpen = false;
  }

  /**
   * Encodes what the resampler still holds without ending the stream (a pause, or a discontinuity in
   * the writer's audio): the tail belongs to the audio before the cut, and audio after it starts a new
   * resampler segment, which gets exactly floor(frames·up/down) samples as a stream of its own would.
   * Returns the samples the tail added; 0 when nothing was written since the last cut (twice is once).
   */
  endSegment(): number {
    if (!this.#segmentOpen) return 0;
    this.#segmentOpen = false;
    return this.#encoder.endSegment();
  }

  /**
   * The server has everything before `serverPosition`: free it. Stale (smaller) acknowledgements are
   * ignored.
   */
  acknowledge(serverPosition: number): void {
    if (serverPosition > this.#ackedServer) this.#ackedServer = serverPosition;
    // Skipped time is acknowledged like audio.
    const at = Math.min(this.#gaps.toCaptured(serverPosition), this.produced);
    if (at <= this.#acked) return;
    this.#acked = at;
    this.#skips.forgetBefore(at);
    this.#encoder.release(at);
    if (this.#expected < at) this.#expected = at;
  }

  /**
   * Sends again from the server's cursor: the slots from there go out again, re-headed (one fresh
   * frame first when the cursor falls inside a slot). When the slots no longer hold audio from there
   * (they overflowed), nextFrame() declares the missing range a gap and continues with what is kept.
   */
  rewindTo(serverPosition: number): void {
    // Behind a cut declared earlier: the frames sent before it were lost too; the gap widens.
    this.#gaps.forgetAfter(serverPosition);
    this.#ackedServer = Math.min(this.#ackedServer, serverPosition);
    this.#expected = this.#resendFrom(serverPosition);
  }

  /** The captured position sending continues from after a rewind to `serverPosition`: never before the acknowledged audio, never past the written. */
  #resendFrom(serverPosition: number): number {
    return Math.min(Math.max(this.#gaps.toCaptured(serverPosition), this.#acked), this.produced);
  }

  /**
   * Samples rewindTo(serverPosition) leaves to send, read without moving anything (an acknowledgement of
   * the same position first changes nothing): what a handshake's cursor means before it is applied.
   */
  unsentFrom(serverPosition: number): number {
    return this.produced - this.#resendFrom(serverPosition);
  }

  /**
   * The session was finished over REST with the server at `serverReceived`: what was captured after it
   * never arrived. Declares that range (cause `undelivered`); the server reports it as TRANSPORT_GAP.
   */
  declareUndelivered(serverReceived: number): void {
    const from = Math.min(this.#gaps.toCaptured(serverReceived), this.produced);
    this.#declare(from, this.produced, 'undelivered');
  }

  /**
   * The server refused everything from `serverReceived` on (the balance was used up): declares the
   * captured range after it (cause `refused`) and returns it, or null when nothing was captured past it.
   */
  declareRefused(serverReceived: number): { readonly from: number; readonly to: number } | null {
    const from = Math.min(this.#gaps.toCaptured(serverReceived), this.produced);
    const to = this.produced;
    this.#declare(from, to, 'refused');
    return to > from ? { from, to } : null;
  }

  /**
   * The gaps declared since the last call (an overflow found by nextFrame(), a REST finish, the balance),
   * each once, for the session to tell; the same empty array when there are none.
   */
  takeGaps(): readonly Gap[] {
    const news = this.#news;
    if (news.length === 0) return NO_GAPS;
    this.#news = [];
    return news;
  }

  #declare(from: number, to: number, cause: Gap['cause']): void {
    const gaps = this.#gaps.declare(from, to, cause);
    if (gaps.length > 0) this.#news.push(...gaps);
  }

  /**
   * The next frame with its 16-byte header (start in the server's positions), or null: a slot, which is
   * a whole frame (or a short one sealed by an earlier pause), and with `allowShort` also the slot still
   * filling (pause and finish send the remainder). The frame and its bytes stay untouched until the
   * server acknowledges them; send them, do not keep them past that.
   */
  nextFrame(epoch: number, allowShort: boolean): EncodedFrame | null {
    const encoder = this.#encoder;
    const skips = this.#skipFrames;
    for (;;) {
      const at = this.#expected;
      if (skips) {
        const skipEnd = this.#skips.endAt(at);
        if (skipEnd >= 0) return this.#skipFrame(at, skipEnd, epoch, allowShort);
      }
      // An overflow dropped slots the server had not got: that audio is gone; say so (takeGaps()).
      // Skipped time in it is not: it needs no audio, and goes as skip frames.
      const kept = encoder.releaseCursor;
      if (kept > at) {
        const end = skips ? Math.min(kept, this.#skips.nextFrom(at)) : kept;
        this.#declare(at, end, 'overflow');
        this.#expected = end;
        continue;
      }
      // Frames stop where the gate has not decided yet, and (with skip frames) where skipped time starts.
      const limit = Math.min(this.#decided, skips ? this.#skips.nextFrom(at) : Number.POSITIVE_INFINITY);
      if (limit <= at) return null;
      const frame = encoder.frameAt(at, epoch, this.#gaps.toServer(at), allowShort, limit - at);
      if (frame !== null) this.#expected += frame.sampleCount;
      return frame;
    }
  }

  /**
   * A skip frame for captured [at, end of its range) (one frame covers at most FRAME.maxSkipSamples),
   * or null while the range is still growing and short: a gate in a long silence declares it in steps
   * of SKIP_STEP_SAMPLES, not per write. A range the gate closed (audio decided after it), a drain
   * (`allowShort`) and sendSkipNow() send it whatever its length. Allocates its 20 bytes: a WebSocket
   * may keep the buffer it was given until it is flushed, so each frame has its own.
   */
  #skipFrame(at: number, rangeEnd: number, epoch: number, allowShort: boolean): EncodedFrame | null {
    // Never past what was written: a decision may run ahead of the resampler's output.
    const produced = this.produced;
    const growing = rangeEnd >= this.#decided || rangeEnd > produced;
    const count = Math.min(Math.min(rangeEnd, produced) - at, FRAME.maxSkipSamples);
    if (count <= 0 || (growing && !allowShort && !this.#skipNow && count < SKIP_STEP_SAMPLES)) return null;
    this.#skipNow = false;
    const bytes = new Uint8Array(FRAME.headerBytes + FRAME.skipPayloadBytes);
    const startSample = this.#gaps.toServer(at);
    encodeSkipFrame(new DataView(bytes.buffer), 0, epoch, startSample, count);
    const end = at + count;
    if (end > this.#skipSentUntil) {
      this.#skipSent += end - Math.max(at, this.#skipSentUntil);
      this.#skipSentUntil = end;
    }
    this.#expected = end;
    return { bytes, startSample, sampleCount: count };
  }

  stats(): AudioStats {
    const produced = this.produced;
    const sent = this.#expected;
    return {
      producedSamples: produced,
      sentSamples: sent,
      ackedSamples: this.#acked,
      unackedSamples: sent - this.#acked,
      queuedSamples: produced - sent,
      bufferedSamples: produced - this.#acked,
      capacitySamples: this.#encoder.capacity,
      overflowSamples: this.#encoder.overflowSamples,
      gapSamples: this.#gaps.ranges.reduce((n, [a, b]) => n + b - a, 0),
      skippedSamples: this.#skipSent,
      lagMs: ((produced - this.#acked) * 1000) / REALTIME.sampleRate,
      resamplerKernel: this.#encoder.kernel,
    };
  }

  /**
   * write() and writePcm16() alternate only at a segment boundary: with a segment open, the resampler
   * still holds input whose output would land after the PCM16 written meanwhile (reordered audio).
   * After a discontinuity it holds nothing, so a device that comes back in another format may switch.
   */
  #setMode(mode: 'float' | 'pcm16'): void {
    if (this.#mode !== undefined && this.#mode !== mode && this.#segmentOpen) {
      throw new RealtimeError('REALTIME_INVALID_STATE', 'write() and writePcm16() cannot be mixed inside a segment: the resampler would reorder audio; mark a discontinuity first');
    }
    this.#mode = mode;
  }
}
