import { EncodePipeline } from '../dsp/encode-pipeline.js';
import type { ResamplerKernel, SampleBlock } from '../dsp/resampler.js';
import type { RingSegments } from '../dsp/ring-types.js';
import { LITTLE_ENDIAN_HOST } from '../dsp/pcm16.js';
import { FRAME, REALTIME, encodeFrameHeader } from '../protocol.js';
import { FrameSlots, type FrameSlot, type OutgoingFrame } from './frame-slots.js';
import { GapLedger, type Gap } from './gap-ledger.js';
import { RealtimeError } from '../errors/realtime-error.js';

export type { Gap } from './gap-ledger.js';
export type { OutgoingFrame } from './frame-slots.js';

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
  /** Held in the ring: everything not acknowledged (queued + unacked). */
  readonly bufferedSamples: number;
  readonly capacitySamples: number;
  /** Samples lost to overflow since the session began. */
  readonly overflowSamples: number;
  /** Captured samples declared as gaps (the server will never get them): capturedSamples - receivedSamples at finish. */
  readonly gapSamples: number;
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

/**
 * The audio on its way out: EncodePipeline (retain: true) holds every sample the server has not
 * acknowledged; frames are cut from its ring here, so a pause or finish can send a short last frame
 * without flushing the resampler, and a reconnect can start again at the server's cursor.
 *
 *   write(Float32 | Int16) ─► EncodePipeline ─► int16 ring ──nextFrame()──► socket
 *   writePcm16(Int16) ───────────────────────┘   ▲ acknowledge(received) frees, rewindTo(received) resends
 *
 * This is the one encode path of the shipping writers: a browser capture declares its AudioContext's
 * rate here (setInput) and writes its blocks as they come; endSegment() is its break in the audio.
 *
 * Positions here are captured positions (the ring's); `acknowledge()` and `rewindTo()` take the server's
 * and frames carry the server's (see GapLedger). `expected` is where the server's next sample must
 * start. When the ring dropped audio the server never got (overflow during a long outage), that range
 * is declared a gap and not sent: no invented samples; the next frame continues at the server's cursor,
 * so the finish's capturedSamples exceeds receivedSamples by exactly the gaps (TRANSPORT_GAP).
 *
 * This is the one framer between capture and socket: a frame is read from the ring straight into its
 * socket-ready buffer (header + PCM16), the message send() takes. Buffers come from FrameSlots and are
 * reused once acknowledged (see there for why not sooner).
 *
 * Garbage: none per frame in the steady state; FrameSlots says when it allocates.
 */
export class AudioOutbox {
  readonly frameSamples: number;
  #pipeline: EncodePipeline;
  #format: Required<InputFormat>;
  readonly #bufferMs: number;
  #mode: 'float' | 'pcm16' | undefined;
  /** Float input went into the resampler since the last segment end: endSegment() has a tail to encode. */
  #segmentOpen = false;
  #acked: number;
  /** The server's last acknowledged cursor, in its own positions. */
  #ackedServer: number;
  #expected: number;
  #overflow = 0;
  readonly #gaps: GapLedger;
  readonly #scratch: Int16Array;
  readonly #slots: FrameSlots;
  #segments: RingSegments<'int16'>;
  /** The ring's storage as int32 pairs, or null where it is not 4-aligned. */
  #storage32: Int32Array | null;

  constructor(options: { sampleRate: number; channels: number; bufferMs: number; startSample?: number; frameMs?: number; onGap: (gap: Gap) => void }) {
    this.#gaps = new GapLedger(options.onGap);
    const startSample = options.startSample ?? 0;
    this.#bufferMs = options.bufferMs;
    this.#format = { sampleRate: options.sampleRate, channels: options.channels, kernel: 'auto' };
    this.#pipeline = this.#makePipeline(this.#format, startSample, options.frameMs ?? 20);
    this.frameSamples = this.#pipeline.frameSamples;
    this.#segments = this.#pipeline.ring.createSegments();
    this.#storage32 = int32View(this.#pipeline.ring.storage);
    this.#acked = startSample;
    this.#ackedServer = startSample;
    this.#expected = startSample;
    this.#scratch = new Int16Array(this.frameSamples);
    this.#slots = new FrameSlots(this.frameSamples);
  }

  /** Frame buffers made so far; flat once the in-flight window is covered. */
  get frameBuffers(): number {
    return this.#slots.size;
  }

  get ring(): EncodePipeline['ring'] {
    return this.#pipeline.ring;
  }

  /**
   * Declares what write() takes, in place of the constructor's rate and channels: for a writer that
   * learns its rate only when it starts (a browser capture runs at its AudioContext's rate), or whose
   * device came back at another rate. The same format again changes nothing. A different one is taken
   * whenever no resampler segment is open: before any audio, or right after endSegment() (a
   * discontinuity). With a segment open the resampler holds input the new format never saw, so that
   * is refused (REALTIME_INVALID_STATE): end the segment first.
   *
   * The resampler is rebuilt; the encoded audio is not touched: every sample the server has not
   * acknowledged moves into the new pipeline's ring at the same positions, and the read cursor stays
   * where it was, so frames continue and a rewindTo() after a reconnect resends the same bytes.
   * Allocates (a new pipeline and one copy of the retained audio): a device change, not a hot path.
   */
  setInput(format: InputFormat): void {
    const next: Required<InputFormat> = { sampleRate: format.sampleRate, channels: format.channels ?? 1, kernel: format.kernel ?? 'auto' };
    const now = this.#format;
    if (next.sampleRate === now.sampleRate && next.channels === now.channels && next.kernel === now.kernel) return;
    if (this.#segmentOpen) {
      throw new RealtimeError('REALTIME_INVALID_STATE', `the input format (${now.sampleRate} Hz, ${now.channels} channel(s)) cannot change inside a segment; mark a discontinuity before switching to ${next.sampleRate} Hz, ${next.channels} channel(s)`);
    }
    const old = this.ring;
    const release = old.releaseCursor;
    const read = old.readCursor;
    const retained = new Int16Array(old.writeCursor - release);
    old.peek(retained, release, retained.length);
    // Built before it replaces the old one: a format the resampler refuses leaves the outbox as it was.
    const pipeline = this.#makePipeline(next, release, (this.frameSamples * 1000) / REALTIME.sampleRate);
    const ring = pipeline.ring;
    // A ring smaller than what is retained (a rate whose filter needs less scratch) keeps the newest
    // audio; the oldest is dropped as an overflow would, and nextFrame() declares it if it was unsent.
    const drop = Math.max(0, retained.length - ring.capacity);
    if (drop > 0) {
      ring.reset(release + drop);
      this.#overflow += drop;
    }
    ring.write(retained, drop, retained.length - drop);
    ring.rewind(Math.max(read, ring.releaseCursor));
    this.#pipeline = pipeline;
    this.#segments = ring.createSegments();
    this.#storage32 = int32View(ring.storage);
    this.#format = next;
  }

  get produced(): number {
    return this.ring.writeCursor;
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

  /** Sent and not acknowledged, in the server's positions (gaps are never in flight). */
  get inFlight(): number {
    return this.#gaps.toServer(this.#expected) - this.#ackedServer;
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
   * declared rate and channels.
   */
  writeFloat(block: SampleBlock): number {
    if (this.#mode !== 'float') this.#setMode('float');
    this.#segmentOpen = true;
    return this.#pipeline.push(block);
  }

  /** PCM16 at 16 kHz mono: straight into the ring, bit-exact (no resampling, no requantisation). */
  writePcm16(samples: Int16Array): number {
    if (this.#mode !== 'pcm16') this.#setMode('pcm16');
    const ring = this.ring;
    let at = 0;
    while (at < samples.length) {
      const count = Math.min(samples.length - at, ring.capacity);
      const room = ring.availableToWrite();
      if (room < count) {
        // Same policy as the pipeline: drop the oldest, keep the live end; positions stay true.
        const need = count - room;
        this.#overflow += need;
        ring.release(ring.releaseCursor + need);
      }
      ring.write(samples, at, count);
      at += count;
    }
    return samples.length;
  }

  /** Encodes what the resampler still holds and ends the stream (finish). A PCM16-only session has nothing there. */
  flushResampler(): void {
    if (this.#mode === 'float' && !this.#pipeline.flushed) this.#pipeline.flush();
    this.#segmentOpen = false;
  }

  /**
   * Encodes what the resampler still holds without ending the stream (a pause, or a discontinuity in
   * the writer's audio): the tail belongs to the audio before the cut, and audio after it starts a new
   * resampler segment (EncodePipeline.endSegment). Returns the samples the tail added; 0 when nothing
   * was written since the last cut (twice is once).
   */
  endSegment(): number {
    if (!this.#segmentOpen) return 0;
    this.#segmentOpen = false;
    return this.#pipeline.endSegment();
  }

  /**
   * The server has everything before `serverPosition`: free it. Stale (smaller) acknowledgements are
   * ignored.
   */
  acknowledge(serverPosition: number): void {
    if (serverPosition > this.#ackedServer) this.#ackedServer = serverPosition;
    const at = Math.min(this.#gaps.toCaptured(serverPosition), this.produced);
    if (at <= this.#acked) return;
    this.#acked = at;
    this.#pipeline.acknowledge(at);
    if (this.#expected < at) this.#expected = at;
  }

  /**
   * Sends again from the server's cursor. When the ring no longer holds audio from there (it
   * overflowed), nextFrame() declares the missing range a gap and continues with what is kept.
   */
  rewindTo(serverPosition: number): void {
    // Behind a cut declared earlier: the frames sent before it were lost too; the gap widens.
    this.#gaps.forgetAfter(serverPosition);
    this.#ackedServer = Math.min(this.#ackedServer, serverPosition);
    const ring = this.ring;
    const at = Math.min(Math.max(this.#gaps.toCaptured(serverPosition), this.#acked), this.produced);
    ring.rewind(Math.min(Math.max(at, ring.releaseCursor), ring.writeCursor));
    this.#expected = at;
  }

  /**
   * The session was finished over REST with the server at `serverReceived`: what was captured after it
   * never arrived. Declares that range (cause `undelivered`); the server reports it as TRANSPORT_GAP.
   */
  declareUndelivered(serverReceived: number): void {
    const from = Math.min(this.#gaps.toCaptured(serverReceived), this.produced);
    this.#gaps.declare(from, this.produced, 'undelivered');
  }

  /**
   * The server refused everything from `serverReceived` on (the balance was used up): declares the
   * captured range after it (cause `refused`) and returns it, or null when nothing was captured past it.
   */
  declareRefused(serverReceived: number): { readonly from: number; readonly to: number } | null {
    const from = Math.min(this.#gaps.toCaptured(serverReceived), this.produced);
    const to = this.produced;
    this.#gaps.declare(from, to, 'refused');
    return to > from ? { from, to } : null;
  }

  /**
   * The next frame with its 16-byte header (start in the server's positions), or null. Whole frames
   * only unless `allowShort` (pause and finish send the remainder). The frame and its bytes stay
   * untouched until the server acknowledges them; send them, do not keep them past that.
   */
  nextFrame(epoch: number, allowShort: boolean): OutgoingFrame | null {
    const ring = this.ring;
    // An overflow moved the read cursor past what the server has: that audio is gone; say so.
    if (ring.readCursor > this.#expected) {
      this.#gaps.declare(this.#expected, ring.readCursor, 'overflow');
      this.#expected = ring.readCursor;
    }
    if (ring.readCursor < this.#expected) ring.rewind(Math.min(this.#expected, ring.writeCursor));
    const available = ring.availableToRead();
    if (available === 0 || (available < this.frameSamples && !allowShort)) return null;
    return this.#frame(epoch, ring.readCursor, Math.min(available, this.frameSamples));
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
      capacitySamples: this.ring.capacity,
      overflowSamples: this.#overflow,
      gapSamples: this.#gaps.ranges.reduce((n, [a, b]) => n + b - a, 0),
      lagMs: ((produced - this.#acked) * 1000) / REALTIME.sampleRate,
      resamplerKernel: this.#pipeline.resampler.kernel,
    };
  }

  #frame(epoch: number, startSample: number, count: number): OutgoingFrame {
    const slot = this.#slots.take(this.#acked);
    const serverStart = this.#gaps.toServer(startSample);
    encodeFrameHeader(slot.header, 0, epoch, serverStart);
    if (LITTLE_ENDIAN_HOST) {
      // The frame copy is the outbox's largest per-sample cost: it runs as int32 pairs where both
      // sides are 4-aligned (always, but after an odd short frame), in monomorphic loops, with no
      // subarray view (no garbage per frame). ring.read() would copy sample by sample.
      const ring = this.ring;
      const segments = this.#segments;
      ring.readSegments(count, segments);
      const { storage, firstStart, firstLength, secondStart, secondLength } = segments;
      copySamples(storage, this.#storage32, firstStart, slot, 0, firstLength);
      if (secondLength > 0) copySamples(storage, this.#storage32, secondStart, slot, firstLength, secondLength);
      ring.consume(count);
    } else {
      const scratch = this.#scratch;
      const bytes = slot.full;
      this.ring.read(scratch, 0, count);
      for (let i = 0, b = FRAME.headerBytes; i < count; i++, b += 2) {
        bytes[b] = scratch[i]! & 0xff;
        bytes[b + 1] = (scratch[i]! >> 8) & 0xff;
      }
    }
    this.#expected = startSample + count;
    slot.end = this.#expected;
    const frame = slot.frame;
    frame.bytes = count === this.frameSamples ? slot.full : slot.full.subarray(0, FRAME.headerBytes + count * FRAME.bytesPerSample);
    frame.startSample = serverStart;
    frame.sampleCount = count;
    return frame;
  }

  #makePipeline(format: Required<InputFormat>, startSample: number, frameMs: number): EncodePipeline {
    return new EncodePipeline({
      inputRate: format.sampleRate,
      channels: format.channels,
      kernel: format.kernel,
      outputRate: REALTIME.sampleRate,
      // Frames are cut here (#frame), not by the pipeline's nextFrame(): no header room needed there.
      headerBytes: 0,
      retain: true,
      bufferMs: this.#bufferMs,
      startSample,
      frameMs,
      onOverflow: (from, to) => {
        this.#overflow += to - from;
      },
    });
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

function int32View(storage: Int16Array): Int32Array | null {
  return storage.byteOffset % 4 === 0 ? new Int32Array(storage.buffer, storage.byteOffset, storage.length >> 1) : null;
}

/** storage[from, from + n) into the slot's payload at `to`: int32 pairs when both are even, then the odd last sample. */
function copySamples(storage: Int16Array, storage32: Int32Array | null, from: number, slot: FrameSlot, to: number, n: number): void {
  const payload = slot.payload;
  if (storage32 !== null && (from & 1) === 0 && (to & 1) === 0) {
    const pairs = n >> 1;
    const payload32 = slot.payload32;
    const src = from >> 1;
    const dst = to >> 1;
    for (let i = 0; i < pairs; i++) payload32[dst + i] = storage32[src + i]!;
    if ((n & 1) === 1) payload[to + n - 1] = storage[from + n - 1]!;
    return;
  }
  for (let i = 0; i < n; i++) payload[to + i] = storage[from + i]!;
}
