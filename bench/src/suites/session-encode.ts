import { FrameEncoder } from '@soundclone/core';
import { AudioOutbox } from '@soundclone/core/internal';
import type { HotLoop } from '../hot-loop.js';
import { benchSignal, blocksOf } from '../signals.js';
import { BLOCK } from './resample.js';

/** How far the simulated server's acknowledgement trails the frames sent: 100 ms, five frames in flight. */
const ACK_LAG_SAMPLES = 1600;

/**
 * The encode path the realtime session ships, on one 128-sample block: AudioOutbox.writeFloat() (what
 * session.write() calls: its FrameEncoder resamples and writes PCM16 straight into the retained frame
 * slots), then every 20 ms frame nextFrame() has ready as socket-ready bytes (a full slot with its
 * 16-byte header written, what FramePump hands to socket.send), then the server's acknowledgement
 * trailing by ACK_LAG_SAMPLES, which frees the slots for reuse. Everything but the socket itself.
 * Target: within 20 % of the resampler alone, timed as a pair in collect/paths.ts; 0 GCs streaming.
 * `pcm16` feeds the same audio as Int16 (a Node microphone or WAV at 48 kHz: write() takes it as is).
 */
export function sessionEncodeLoop(inputRate: number, input: 'float32' | 'int16' = 'float32', signal = benchSignal(inputRate)): HotLoop & { frames(): number; checksum(): number } {
  const outbox = new AudioOutbox({ sampleRate: inputRate, channels: 1, bufferMs: 30_000 });
  const blocks = input === 'float32' ? blocksOf(signal, BLOCK) : blocksOf(signal, BLOCK).map((b) => Int16Array.from(b, (v) => Math.round(v * 32767)));
  let next = 0;
  let frames = 0;
  let checksum = 0;
  return {
    id: input === 'float32' ? `session-encode/best/${inputRate}` : `session-encode/best-int16/${inputRate}`,
    label: input === 'float32'
      ? 'session encode path, Float32 in (resample + PCM16 + framed socket-ready bytes + ack)'
      : 'session encode path, Int16 in (resample + PCM16 + framed socket-ready bytes + ack)',
    samplesPerStep: BLOCK,
    inputRate,
    step: () => {
      outbox.writeFloat(blocks[next]!);
      next = next + 1 === blocks.length ? 0 : next + 1;
      for (let frame = outbox.nextFrame(1, false); frame !== null; frame = outbox.nextFrame(1, false)) {
        // Touch header and payload as a socket would, so the frame's work cannot be skipped.
        checksum = (checksum + frame.bytes[0]! + frame.bytes[frame.bytes.length - 1]!) | 0;
        frames++;
      }
      const acked = outbox.expected - ACK_LAG_SAMPLES;
      if (acked > outbox.ackedServer) outbox.acknowledge(acked);
    },
    frames: () => frames,
    checksum: () => checksum,
  };
}

/**
 * The same encoder without a session, as the READMEs' encode-only example runs it: FrameEncoder.write()
 * on one 128-sample block, then every socket-ready frame nextFrame() has (each call frees the frame
 * before it, so the slots go round without acknowledgements). The session row above minus the
 * outbox's bookkeeping: the class a benchmark harness calls is the class session.write() runs.
 */
export function frameEncoderLoop(inputRate: number, signal = benchSignal(inputRate)): HotLoop & { frames(): number; checksum(): number } {
  const encoder = new FrameEncoder({ inputRate });
  const blocks = blocksOf(signal, BLOCK);
  let next = 0;
  let frames = 0;
  let checksum = 0;
  return {
    id: `session-encode/frame-encoder/${inputRate}`,
    label: 'FrameEncoder alone, Float32 in (resample + PCM16 + framed socket-ready bytes)',
    samplesPerStep: BLOCK,
    inputRate,
    step: () => {
      encoder.write(blocks[next]!);
      next = next + 1 === blocks.length ? 0 : next + 1;
      for (let frame = encoder.nextFrame(); frame !== null; frame = encoder.nextFrame()) {
        checksum = (checksum + frame.bytes[0]! + frame.bytes[frame.bytes.length - 1]!) | 0;
        frames++;
      }
    },
    frames: () => frames,
    checksum: () => checksum,
  };
}
