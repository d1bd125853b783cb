import { afterEach, describe, expect, it } from 'vitest';
import { SoundClone, type RealtimeSocketSession } from '@soundclone/core';
import { postgresForFile } from '../support/postgres.js';
import { HttpRoundRobin } from '../support/round-robin.js';
import { KEY_A, start, type TestServer } from '../support/server.js';
import { speech } from '../realtime/support.js';

/**
 * One account's balance spent by many live sessions on two nodes at once: each node checks spending
 * against the same account row (PostgreSQL), so the sessions together never take more than the account
 * holds. What stands in for the balancer is HttpRoundRobin, a per-request round-robin HTTP and
 * WebSocket forwarder, in front of the sockets.
 */
describe('realtime spending across nodes', () => {
  const pgsql = postgresForFile();
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  it('20 concurrent sessions of one account on 2 nodes near its balance: never overspent, every session charged what it stored, nothing left reserved', async () => {
    // 600 Characters pay for 60 seconds of audio; the sessions bring 20 × 5 s.
    const balance = 600;
    const databaseUrl = await pgsql.freshDatabase();
    // The nodes pick their own ports; the balancer learns them once they are up.
    const ports: number[] = [];
    const balancer = await new HttpRoundRobin(ports).listen();
    stops.push(() => balancer.close());
    const nodes: TestServer[] = [];
    for (let i = 0; i < 2; i++) {
      const node = await start({
        databaseUrl, publicUrl: balancer.url, ttsHistorySeedCount: 0, maxRealtimeSessionsPerAccount: 25,
        accountOverrides: { [KEY_A]: { totalMonthlyChars: 0, totalOrderChars: balance } },
      });
      ports.push(node.port);
      stops.push(() => node.close());
      nodes.push(node);
    }
    // Created on each node in turn; the socket URLs they hand out are the balancer's, so half the
    // sockets reach the other node and are forwarded to the session's own.
    const clients = nodes.map((node) => new SoundClone({ accessKey: KEY_A, baseUrl: node.url }));
    const sessions: RealtimeSocketSession[] = [];
    for (let i = 0; i < 20; i++) sessions.push(await (clients[i % 2] as SoundClone).stt.realtime.connect({}));
    const owners = await pgsql.query(databaseUrl, 'SELECT node_id, count(*)::int AS n FROM realtime_session GROUP BY node_id ORDER BY node_id');
    expect(owners.map((o) => o.n)).toEqual([10, 10]);

    const exhausted = sessions.map((s) => new Promise<number>((resolve) => s.on('balance.exhausted', (e: { receivedSamples: number }) => resolve(e.receivedSamples))));
    const pcm = speech(5, 7).subarray(0, 5 * 16_000);
    await Promise.all(sessions.map(async (session, i) => {
      for (let at = 0; at < pcm.length; at += 320) {
        session.writePcm16(pcm.subarray(at, at + 320));
        if (at % 3200 === 0) await new Promise((r) => setTimeout(r, i % 3));
      }
    }));
    const results = await Promise.all(sessions.map((s) => s.finish().then((r) => r.session, (e: { session?: { usage: { receivedSamples: bigint; billableCharacters: bigint }; status: string } }) => e.session)));

    let charged = 0n;
    let exhaustedCount = 0;
    for (const [i, session] of results.entries()) {
      if (session === undefined) throw new Error(`session ${i} ended without a view`);
      const received = session.usage.receivedSamples;
      // A session is charged 10 Characters per started second of what it stored, and stores no more
      // than it was granted: whole seconds once the balance ran short.
      expect(session.usage.billableCharacters).toBe(((received + 15_999n) / 16_000n) * 10n);
      charged += session.usage.billableCharacters;
      if (session.status === 'PARTIAL') {
        exhaustedCount++;
        expect(received % 16_000n).toBe(0n);
        expect(await exhausted[i]).toBe(Number(received));
      } else {
        expect(received).toBe(BigInt(pcm.length));
      }
    }
    // The balance ran out: not every session could finish, and together they spent it all, not one Character more.
    expect(exhaustedCount).toBeGreaterThan(0);
    expect(charged).toBe(BigInt(balance));
    const [account] = await pgsql.query(databaseUrl, "SELECT order_used::int AS used, reserved::int AS reserved FROM account WHERE id = (SELECT owner_id FROM task LIMIT 1)");
    expect(account).toEqual({ used: balance, reserved: 0 });
    const [sums] = await pgsql.query(databaseUrl, "SELECT sum(delta_reserved)::int AS reserved, sum(delta_order_used)::int AS used FROM ledger_entry WHERE kind <> 'seed'");
    expect(sums).toEqual({ reserved: 0, used: balance });
    // Each session settled once.
    const settles = await pgsql.query(databaseUrl, "SELECT task_id, count(*)::int AS n FROM ledger_entry WHERE kind = 'settle' GROUP BY task_id");
    expect(settles).toHaveLength(20);
    expect(settles.every((s) => s.n === 1)).toBe(true);
  });
});
