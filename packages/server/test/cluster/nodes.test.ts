import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { SoundClone } from '@soundclone/core';
import { ChaosProxy } from '../../src/testing/chaos-proxy.js';
import { postgresForFile } from '../support/postgres.js';
import { HttpRoundRobin, RoundRobin } from '../support/round-robin.js';
import { idem, KEY_A, KEY_B, PREFIX, start, type TestServer } from '../support/server.js';
import { createSession, open, speech } from '../realtime/support.js';
import type { ServerOptions } from '../../src/index.js';

/**
 * Several nodes on one PostgreSQL database, behind what stands in for a balancer: RoundRobin, a TCP
 * forwarder that sends each connection to the next node (no stickiness). A realtime session lives on
 * the node that created it; whatever reaches the other node about it is forwarded there.
 */
describe('nodes on one database behind a round-robin balancer', () => {
  const pgsql = postgresForFile();
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  const cluster = async (options: Partial<ServerOptions> = {}) => {
    const databaseUrl = await pgsql.freshDatabase();
    // Each node listens on a port of its own choosing; the balancer learns it once the node is up (a
    // port picked before the node binds it can be taken meanwhile by another process).
    const ports: number[] = [];
    const balancer = await new RoundRobin(ports).listen();
    stops.push(() => balancer.close());
    const nodes: TestServer[] = [];
    for (let i = 0; i < 2; i++) {
      const node = await start({ databaseUrl, publicUrl: balancer.url, retainRealtimeAudioSamples: 10 * 16_000, ...options });
      ports.push(node.port);
      stops.push(() => node.close());
      nodes.push(node);
    }
    return { databaseUrl, balancer, a: nodes[0] as TestServer, b: nodes[1] as TestServer };
  };

  it('a session made on A whose socket lands on B streams through B to A: every sample stored, finished once', async () => {
    const { databaseUrl, balancer, a, b } = await cluster();
    balancer.next = 1;
    const session = await new SoundClone({ accessKey: KEY_A, baseUrl: a.url }).stt.realtime.connect({});
    expect(balancer.landed).toEqual([b.port]);
    // The socket is A's: B only passed the upgrade on.
    expect(a.sockets.log.some((e) => e.sessionId === session.sessionId && e.kind === 'connected')).toBe(true);
    expect(b.sockets.log.filter((e) => e.sessionId === session.sessionId)).toEqual([]);
    expect(b.sockets.size).toBe(0);

    const pcm = speech(3).subarray(0, Math.round(2.5 * 16_000));
    for (let at = 0; at < pcm.length; at += 320) session.writePcm16(pcm.subarray(at, at + 320));
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));

    // The stored audio, read through B (forwarded to A), is what was sent, sample for sample.
    const stored = await fetch(`${b.url}${PREFIX}/stt/realtime/sessions/${session.sessionId}/audio`, { headers: { accessKey: KEY_A } });
    expect(stored.status).toBe(200);
    const sent = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    expect(createHash('sha256').update(Buffer.from(await stored.arrayBuffer())).digest('hex')).toBe(createHash('sha256').update(sent).digest('hex'));
    expect(b.requests.some((r) => r.path.endsWith('/audio') && r.status === 200)).toBe(true);

    const rows = await pgsql.query(databaseUrl, 'SELECT node_id, open FROM realtime_session WHERE id = $1', [session.sessionId]);
    expect(rows).toEqual([{ node_id: a.node.id, open: false }]);
    const task = (await b.call('GET', `/stt/transcriptions/${result.session.transcriptionId}`)).body.data;
    expect(task.billing).toMatchObject({ state: 'SETTLED', settledCharacters: '30' });
  });

  it('the SDK pointed at a per-request balancer alone: sessions stream whichever node each request and socket reaches', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    // Each node listens on a port of its own choosing; the balancer learns it once the node is up (a
    // port picked before the node binds it can be taken meanwhile by another process).
    const ports: number[] = [];
    const balancer = await new HttpRoundRobin(ports).listen();
    stops.push(() => balancer.close());
    const nodes: TestServer[] = [];
    for (let i = 0; i < 2; i++) {
      const node = await start({ databaseUrl, publicUrl: balancer.url });
      ports.push(node.port);
      stops.push(() => node.close());
      nodes.push(node);
    }
    const client = new SoundClone({ accessKey: KEY_A, baseUrl: balancer.url });
    const pcm = speech(2).subarray(0, 16_000);
    const crossed: string[] = [];
    for (let i = 0; i < 3; i++) {
      const session = await client.stt.realtime.connect({});
      for (let at = 0; at < pcm.length; at += 320) session.writePcm16(pcm.subarray(at, at + 320));
      const result = await session.finish();
      expect(result.session).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: 16_000n } });
      const owner = nodes.find((n) => n.services.realtime.byId(session.sessionId) !== undefined) as TestServer;
      expect(nodes.filter((n) => n.services.realtime.byId(session.sessionId) !== undefined)).toEqual([owner]);
      const landed = balancer.upgrades.filter((u) => u.query.get('sessionId') === session.sessionId || u.query.get('token')?.includes(session.sessionId));
      expect(landed.length).toBeGreaterThan(0);
      if (landed.some((u) => u.port !== owner.port)) crossed.push(session.sessionId);
      // Read twice through the balancer: once from each node, one of them forwarding to the owner.
      for (let read = 0; read < 2; read++) {
        const view = await fetch(`${balancer.url}${PREFIX}/stt/realtime/sessions/${session.sessionId}`, { headers: { accessKey: KEY_A } });
        expect((await view.json()).data).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: '16000' } });
      }
    }
    // Strict alternation sends some socket to the node that does not hold its session.
    expect(crossed.length).toBeGreaterThan(0);
    expect(new Set(balancer.requests)).toEqual(new Set(ports));
    expect(nodes.every((n) => n.requests.some((r) => r.path.startsWith(`${PREFIX}/stt/realtime/sessions/rs_`) && r.status === 200))).toBe(true);
  });

  it('a token from A opens a socket on B; pause, view, socket-token and finish on B are forwarded to A; no second hop', async () => {
    const { a, b } = await cluster();
    const created = await createSession(a);
    const peer = await open(`${b.url.replace(/^http/, 'ws')}${PREFIX}/stt/realtime/socket?token=${created.socket.token}`);
    stops.push(async () => void (await peer.close()));
    const ready = await peer.waitFor('session.ready');
    expect(ready.sessionId).toBe(created.sessionId);
    expect(a.sockets.log.some((e) => e.sessionId === created.sessionId && e.kind === 'connected')).toBe(true);
    peer.stream(1, speech(1).subarray(0, 16_000));
    await peer.acked(16_000);

    // An upgrade the owner refuses reaches the client as the owner answered it.
    a.faults.inject({ method: 'GET', path: '/stt/realtime/socket', action: { kind: 'status', status: 429, retryAfterSec: 3 } });
    await expect(open(`${b.url.replace(/^http/, 'ws')}${PREFIX}/stt/realtime/socket?token=${created.socket.token}`)).rejects.toMatchObject({ status: 429, body: { errorCode: 'RATE_LIMITED', message: 'injected fault: 429' } });
    // A token that does not verify is refused on B as on A.
    await expect(open(`${b.url.replace(/^http/, 'ws')}${PREFIX}/stt/realtime/socket?token=${created.socket.token.slice(0, -2)}xx`)).rejects.toMatchObject({ status: 401 });

    const paused = await b.call('POST', `/stt/realtime/sessions/${created.sessionId}/pause`, { json: { capturedSamples: '16000' } });
    expect(paused.status).toBe(200);
    expect(paused.body.data).toMatchObject({ sessionId: created.sessionId, status: 'PAUSED', accepting: false });
    await peer.waitFor('session.paused');
    const view = await b.call('GET', `/stt/realtime/sessions/${created.sessionId}`);
    expect(view.body.data).toMatchObject({ status: 'PAUSED', usage: { receivedSamples: '16000' }, connection: { attached: true } });
    const token = await b.call('POST', `/stt/realtime/sessions/${created.sessionId}/socket-token`, { json: {} });
    expect(token.body.data.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/sound_clone\/api\/v1\/stt\/realtime\/socket$/);
    expect(a.services.realtime.verifyToken(token.body.data.token)).toBe(created.sessionId);
    // Another account's session is not found through B either.
    expect((await b.call('GET', `/stt/realtime/sessions/${created.sessionId}`, { key: KEY_B })).status).toBe(404);
    // A request another node forwarded already is not forwarded again.
    const hopped = await b.call('GET', `/stt/realtime/sessions/${created.sessionId}`, { headers: { 'X-Soundclone-Forwarded-By': 'node_other' } });
    expect(hopped.status).toBe(503);
    expect(hopped.body).toMatchObject({ errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'SESSION_OWNER_MOVED' } });
    await expect(open(`${b.url.replace(/^http/, 'ws')}${PREFIX}/stt/realtime/socket?sessionId=${created.sessionId}`, { accessKey: KEY_A, 'X-Soundclone-Forwarded-By': 'node_other' })).rejects.toMatchObject({
      status: 503,
      body: { errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'SESSION_OWNER_MOVED' } },
    });

    const finished = await b.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: '16000' } });
    expect(finished.status).toBe(200);
    expect(finished.body.data).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: '16000', billableCharacters: '10' } });
    await peer.waitFor('session.finished');
    for (const path of ['/pause', '/finish', '/socket-token']) {
      expect(a.requests.some((r) => r.path === `${PREFIX}/stt/realtime/sessions/${created.sessionId}${path}`)).toBe(true);
    }
  });

  it('counts the open-session limit across nodes, also for creates racing on both', async () => {
    const { a, b } = await cluster({ maxRealtimeSessionsPerAccount: 2 });
    const first = await createSession(a);
    await createSession(b);
    for (const node of [a, b]) {
      const refused = await node.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } });
      expect(refused.status).toBe(429);
      expect(refused.body.details).toMatchObject({ reason: 'ACCOUNT_SESSION_LIMIT', limit: 2 });
    }
    // Each node reports the account's sessions on every node.
    for (const node of [a, b]) expect((await node.call('GET', '/stt/capabilities')).body.data.realtimeParameters.limits).toMatchObject({ maxOpenSessionsPerAccount: 2, openSessions: 2 });
    // Finishing A's session through B frees a place on either node.
    expect((await b.call('POST', `/stt/realtime/sessions/${first.sessionId}/finish`, { json: { capturedSamples: '0' } })).status).toBe(200);
    expect((await b.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } })).status).toBe(200);

    const racing = await Promise.all([a, b, a, b, a, b].map((node) => node.call('POST', '/stt/realtime/sessions', { key: KEY_B, json: {}, headers: { 'Idempotency-Key': idem() } })));
    expect(racing.map((r) => r.status).sort()).toEqual([200, 200, 429, 429, 429, 429]);
  });

  it('GET /health: 200, 503 while a node drains (new sessions refused there, the other node takes them), then the node leaves the registry', async () => {
    const { databaseUrl, a, b } = await cluster();
    const health = async (node: TestServer) => {
      const r = await fetch(`${node.url}/health`);
      return { status: r.status, body: await r.json() };
    };
    expect(await health(a)).toEqual({ status: 200, body: { status: 'ok', nodeId: a.node.id } });
    expect((await fetch(`${a.url}${PREFIX}/health`)).status).toBe(404);
    const draining = a.drain({ graceMs: 400 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await health(a)).toEqual({ status: 503, body: { status: 'draining', nodeId: a.node.id, reason: 'DRAINING' } });
    const refused = await a.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } });
    expect(refused.status).toBe(503);
    expect(refused.body.details).toEqual({ reason: 'NODE_DRAINING' });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect((await pgsql.query(databaseUrl, 'SELECT draining FROM node WHERE id = $1', [a.node.id]))).toEqual([{ draining: true }]);
    expect((await health(b)).status).toBe(200);
    expect((await b.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } })).status).toBe(200);
    await draining;
    expect((await pgsql.query(databaseUrl, 'SELECT id FROM node ORDER BY id'))).toEqual([{ id: b.node.id }]);
  });

  it('a node that cannot reach its database: /health 503, REST and socket upgrades 503 STORE_UNAVAILABLE, and it keeps running', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    const db = new URL(databaseUrl);
    const proxy = await new ChaosProxy(Number(db.port)).listen();
    let proxyOpen = true;
    stops.push(async () => {
      if (proxyOpen) await proxy.close();
    });
    db.port = String(proxy.port);
    const node = await start({ databaseUrl: db.toString() });
    stops.push(() => node.close());
    const created = await createSession(node);
    expect((await fetch(`${node.url}/health`)).status).toBe(200);

    // The database goes away: open connections reset, new ones refused.
    proxy.cut();
    await proxy.close();
    proxyOpen = false;
    const health = await fetch(`${node.url}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: 'unavailable', reason: 'STORE_UNAVAILABLE' });
    const rest = await node.call('GET', '/stt/transcriptions');
    expect(rest.status).toBe(503);
    expect(rest.body.details).toEqual({ reason: 'STORE_UNAVAILABLE' });
    // A socket for a session this node does not hold needs the store to find it: refused with 503.
    await expect(open(`${node.url.replace(/^http/, 'ws')}${PREFIX}/stt/realtime/socket?sessionId=rs_elsewhere`, { accessKey: KEY_A })).rejects.toMatchObject({
      status: 503,
      body: { errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'STORE_UNAVAILABLE' } },
    });
    // The session this node holds still opens (nothing to look up); its audio needs a spending answer
    // from the store, which does not come: the frame is refused, retryable, nothing stored.
    const peer = await open(`${node.url.replace(/^http/, 'ws')}${PREFIX}/stt/realtime/socket?sessionId=${created.sessionId}`, { accessKey: KEY_A });
    await peer.waitFor('session.ready');
    peer.stream(1, speech(1).subarray(0, 3200));
    const refused = await peer.waitFor('error', (m) => m.code === 'SERVICE_UNAVAILABLE', 10_000);
    expect(refused.fatal).toBe(false);
    expect(peer.all('audio.ack').filter((m) => m.receivedSamples !== '0')).toEqual([]);
    await peer.close();
    expect((await node.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).status).toBe(200);
  });
});
