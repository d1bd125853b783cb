import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { SoundClone } from '@soundclone/core';
import { LocalCluster } from '@soundclone/server';
import type { DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { closeRig, startDemoRig } from './rig.ts';
import { speechWav } from './support.ts';
import { snapshot, stopDemo, tryStart, until } from './demo-page.ts';

/**
 * The live-captions demo against a local cluster, in real Chromium: three nodes over one PostgreSQL
 * behind haproxy (LocalCluster, the nodes in this process), the demo's backend making sessions through
 * the balancer and the page's socket going through it too, so sessions and sockets land on any node.
 */
const KEY = 'demo-cluster-key';
let cluster: LocalCluster;
let demo: DemoServer;
let browser: Browser;

beforeAll(async () => {
  cluster = await LocalCluster.start({ nodes: 3, accessKeys: [KEY], inProcess: { realtimeTiming: { supplementWaitMs: 200 } } });
  ({ demo, browser } = await startDemoRig('fake-mic-demo-cluster.wav', speechWav().pcm, { service: { baseUrl: cluster.url, accessKey: KEY } }));
});
afterAll(async () => {
  await closeRig({ demo, browser });
  await cluster?.stop();
});

describe('live-captions demo through a local cluster', () => {
  it('captions through the balancer, session after session, each completed once', async () => {
    expect(demo.server).toBeUndefined();
    expect(demo.baseUrl).toBe(cluster.url);
    const page = await browser.newPage();
    try {
      await page.goto(`${demo.url}/`);
      // Three Starts: with round robin over three nodes the sessions and their sockets land on different nodes.
      for (let i = 0; i < 3; i++) {
        expect(await tryStart(page)).toBeNull();
        await until('captions', () => snapshot(page), (s) => (s.stats?.sentSamples ?? 0) >= 16_000 && s.lines.length > 0);
        const stopped = await stopDemo(page);
        expect(stopped.finish.status).toBe('COMPLETED');
        expect(Number(stopped.finish.receivedSamples)).toBeGreaterThanOrEqual(16_000);
      }
      expect(demo.sessions).toHaveLength(3);
      const client = new SoundClone({ accessKey: KEY, baseUrl: cluster.url });
      for (const id of demo.sessions) expect((await client.stt.realtime.get(id)).status).toBe('COMPLETED');
      // The sessions live on more than one node.
      const owners = new Set(demo.sessions.map((id) => cluster.nodes.find((n) => n.server?.services.realtime.byId(id) !== undefined)?.name));
      expect(owners.size).toBeGreaterThan(1);
    } finally {
      await page.close();
    }
  });
});
