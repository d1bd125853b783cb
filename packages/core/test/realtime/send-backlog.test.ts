import { describe, expect, it } from 'vitest';
import { SendBacklog } from '../../src/realtime/watch/send-backlog.js';

/**
 * Feeds a backlog the readings a 100 ms watch tick would take of a stream: `produce` samples per ms
 * written (sent at once while the window allows), `carry` samples per ms the path delivers and the
 * server acknowledges, the window 32,000 samples.
 */
function stream(backlog: SendBacklog, from: number, to: number, produce: number, carry: number, start = { acked: 0, inFlight: 0 }) {
  let { acked, inFlight } = start;
  for (let now = from; now <= to; now += 100) {
    backlog.observe(now, acked, inFlight);
    const delivered = Math.min(inFlight, carry * 100);
    acked += delivered;
    inFlight = Math.min(32_000, inFlight - delivered + produce * 100);
  }
  return { acked, inFlight };
}

describe('SendBacklog: what is queued ahead of a probe, and for how long', () => {
  it('assumes the real-time rate (16 samples/ms) until a quarter second of acks was seen', () => {
    const backlog = new SendBacklog();
    expect(backlog.throughput()).toBe(16);
    backlog.observe(0, 0, 3200);
    expect(backlog.queued).toBe(3200); // the first reading of a run: all in flight may be queued
    expect(backlog.drainMs()).toBe(200 - 150); // less the estimate's resolution (the ack interval and a tick)
  });

  it('a path that keeps up with the audio: the throughput is the audio rate and almost nothing is queued', () => {
    const backlog = new SendBacklog();
    stream(backlog, 0, 3000, 16, 100);
    expect(backlog.throughput()).toBeGreaterThan(15);
    expect(backlog.throughput()).toBeLessThanOrEqual(16);
    expect(backlog.queued).toBeLessThanOrEqual(1600);
  });

  it('a slow link: the throughput is the link, the full window is queued, and draining it takes window / throughput', () => {
    const backlog = new SendBacklog();
    const at = stream(backlog, 0, 6000, 16, 8);
    expect(at.inFlight).toBe(32_000);
    expect(backlog.throughput()).toBeCloseTo(8, 1);
    // The acks stop (the server withholds them) and nothing more is sent (the window is full): the
    // link keeps draining what is queued at its rate.
    backlog.observe(6100, at.acked, at.inFlight);
    backlog.observe(6600, at.acked, at.inFlight);
    expect(backlog.queued).toBeGreaterThan(32_000 - 8 * 700);
    expect(backlog.queued).toBeLessThanOrEqual(32_000 - 8 * 500);
    expect(backlog.drainMs()).toBeGreaterThan(3000);
  });

  it('a burst of acks after a stall counts over the whole stall: the path cannot look faster than it was', () => {
    const backlog = new SendBacklog();
    const at = stream(backlog, 0, 3000, 16, 100);
    // 1 s without an ack, then all of it at once.
    for (let now = 3100; now < 4100; now += 100) backlog.observe(now, at.acked, 1600 + (now - 3000) * 16);
    backlog.observe(4100, at.acked + 17_600, 0);
    // Measured per tick the burst would say 176 samples/ms; over the stall it is the audio's rate.
    expect(backlog.throughput()).toBeLessThan(20);
  });

  it('the queue is never more than what is unacknowledged, and a sent burst goes in whole', () => {
    const backlog = new SendBacklog();
    stream(backlog, 0, 3000, 16, 100);
    backlog.observe(3100, 48_000, 200);
    expect(backlog.queued).toBeLessThanOrEqual(200);
    backlog.observe(3200, 48_000, 100_200); // a finish sends all it owes past the window
    expect(backlog.queued).toBeGreaterThan(100_200 - 16 * 100 - 1);
  });

  it('an interruption (a new socket) starts a run: its resent window counts as queued; the throughput is kept', () => {
    const backlog = new SendBacklog();
    stream(backlog, 0, 6000, 16, 8);
    backlog.interrupt();
    backlog.observe(9000, 50_000, 32_000);
    expect(backlog.queued).toBe(32_000);
    expect(backlog.throughput()).toBeCloseTo(8, 1);
    expect(backlog.drainMs()).toBe(32_000 / 8 - 150);
  });
});

describe('SendBacklog: bufferedAmount', () => {
  it('is a floor: bytes still in the process stay queued whatever the throughput says, never more than is unacknowledged', () => {
    const backlog = new SendBacklog();
    const at = stream(backlog, 0, 3000, 16, 100); // a fast path: 16 samples/ms
    backlog.observe(3100, at.acked, 16_000);
    backlog.observe(5100, at.acked, 16_000); // on paper the path drained it all
    expect(backlog.queued).toBe(0);
    backlog.observe(5200, at.acked, 16_000, 20_000); // but 20,000 bytes never left the process
    expect(backlog.queued).toBe(10_000);
    backlog.observe(5300, at.acked, 4000, 20_000);
    expect(backlog.queued).toBe(4000);
  });
});
