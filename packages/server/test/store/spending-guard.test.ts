import { describe, expect, it } from 'vitest';
import { KEY_A, serverForSuite } from '../support/server.js';
import { connect, speech } from '../realtime/support.js';

describe('realtime spending guard over the store', () => {
  const server = serverForSuite({ accountOverrides: { [KEY_A]: { totalMonthlyChars: 0, totalOrderChars: 25 } } });

  it('asks the store when a frame reaches a second not paid for yet (or ends exactly on a paid one), not once per frame, and reserves the same', async () => {
    const store = server.services.store;
    const asked: bigint[] = [];
    const accrue = store.accrueRealtime.bind(store);
    store.accrueRealtime = (taskId, wanted) => {
      asked.push(wanted);
      return accrue(taskId, wanted);
    };
    try {
      const { peer } = await connect(server);
      // 1.5 s in 20 ms frames: 75 frames, into two started seconds.
      peer.stream(1, speech(3), 0, 24_000, 320);
      await peer.acked(24_000);
      // The frame ending exactly at 16,000 asks too: were that the limit, the session would be exhausted there.
      expect(asked).toEqual([320n, 16_000n, 16_320n]);
      const account = server.services.accounts.byAccessKey(KEY_A);
      expect((await store.accounts.ledger(account?.id ?? ''))?.chars.reserved).toBe(20n);
    } finally {
      store.accrueRealtime = accrue;
    }
  });
});
