import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GapLines } from '../src/gap-lines.js';
import { Output } from '../src/output.js';

describe('gap lines in the CLI', () => {
  function capture(): { lines: string[]; print: (t: string) => void } {
    const lines: string[] = [];
    return { lines, print: (t) => lines.push(t) };
  }

  it('name each cause, merge a burst into one line per interval, keep running totals', async () => {
    const { lines, print } = capture();
    const gaps = new GapLines(print, 200);
    gaps.add({ cause: 'overflow', seconds: 0.5 });
    expect(lines).toEqual(['gap: 0.50 s in 1 gap (overflow: the connection was down longer than the send buffer holds); total lost so far 0.50 s in 1 gap']);
    for (let i = 0; i < 20; i++) gaps.add({ cause: 'overflow', seconds: 0.1 });
    gaps.add({ cause: 'undelivered', seconds: 0.25 });
    expect(lines).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 350));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe('gap: 2.00 s in 20 gaps (overflow: the connection was down longer than the send buffer holds); 0.25 s in 1 gap (undelivered: the session finished while audio was still unsent); total lost so far 2.75 s in 22 gaps');
    gaps.add({ cause: 'dropped', seconds: 0.02 });
    gaps.flush();
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatch(/^gap: 0\.02 s in 1 gap \(dropped: .*\); total lost so far 2\.77 s in 23 gaps$/);
    expect(gaps.totalGaps).toBe(23);
  });
});

describe('Output.columns', () => {
  it('a terminal that reports 0 or no columns gets 80, a real width is kept', () => {
    const err = new PassThrough();
    expect(new Output(Object.assign(new PassThrough(), { isTTY: true, columns: 0 }), err, false).columns).toBe(80);
    expect(new Output(Object.assign(new PassThrough(), { isTTY: true }), err, false).columns).toBe(80);
    expect(new Output(Object.assign(new PassThrough(), { isTTY: true, columns: 132 }), err, false).columns).toBe(132);
  });
});
