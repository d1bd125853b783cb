import { describe, expect, it } from 'vitest';
import { heavyTurn, requestTurn } from '../src/http/heavy-turns.js';

/** The turn-takers that keep large bodies and bursts of requests from running back to back. */
describe('heavy turns', () => {
  it('gives one turn at a time, in order, and waits as long as the last turn took before the next', async () => {
    const order: string[] = [];
    const work = async (name: string, ms: number): Promise<void> => {
      const release = await heavyTurn();
      order.push(`start ${name}`);
      const until = performance.now() + ms;
      while (performance.now() < until); // synchronous work, as a parse is
      order.push(`end ${name}`);
      release();
    };
    const started = performance.now();
    await Promise.all([work('a', 40), work('b', 40), work('c', 1)]);
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    // a (40 ms), a pause of ~40 ms, b (40 ms), a pause of ~40 ms: well over the 80 ms of work alone.
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('starts one request per event-loop iteration', async () => {
    let iterations = 0;
    let counting = true;
    const tick = (): void => {
      iterations += 1;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const at: number[] = [];
    await Promise.all(Array.from({ length: 5 }, () => requestTurn().then(() => void at.push(iterations))));
    counting = false;
    expect(new Set(at).size).toBe(5);
  });
});
