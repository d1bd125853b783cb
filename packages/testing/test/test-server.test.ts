import { afterEach, describe, expect, it } from 'vitest';
import { isSoundCloneError, ApiError, SoundClone } from '@soundclone/core';
import { isTestingError, scriptAudio, startTestServer, type TestServer } from '@soundclone/testing';

/** Counts of the handle kinds that say something was left open (sockets, servers, timers). */
function openHandles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) if (/TCP|Timeout|Immediate/.test(kind)) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/** Lets handles that are closing finish closing (a socket's close is one turn of the loop late). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('startTestServer', () => {
  const started: TestServer[] = [];
  afterEach(async () => {
    for (const server of started.splice(0)) await server.close();
  });

  it('serves on 127.0.0.1 behind its proxy, with a client for its own account', async () => {
    const server = await startTestServer({ script: [{ at: '0.2s', say: 'ready to go' }] });
    started.push(server);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).not.toBe(server.service.url);
    const session = await server.client().stt.realtime.connect();
    session.writePcm16(scriptAudio([{ at: '0.2s', say: 'ready to go' }]));
    const result = await session.finish();
    expect(result.lines.map((l) => l.text)).toEqual(['ready to go']);
    expect(server.faults.network.connections).toBeGreaterThan(0); // the socket went through the proxy
  });

  it('isolates each server: its own key, account and store', async () => {
    const a = await startTestServer();
    const b = await startTestServer();
    started.push(a, b);
    expect(a.accessKey).not.toBe(b.accessKey);
    const created = await a.client().stt.realtime.create();
    // B does not know A's key, nor A's session.
    const foreign = await b.client({ accessKey: a.accessKey, maxRetries: 0 }).stt.realtime.get(created.sessionId).catch((e: unknown) => e);
    expect(isSoundCloneError(foreign, ApiError) && foreign.status).toBe(401);
    const missing = await b.client({ maxRetries: 0 }).stt.realtime.get(created.sessionId).catch((e: unknown) => e);
    expect(isSoundCloneError(missing, ApiError) && missing.status).toBe(404);
    await expect(b.charges(created.sessionId)).rejects.toSatisfy((e) => isTestingError(e) && e.code === 'TESTING_NOT_FOUND');
  });

  it('leaves no socket, server or timer behind after close()', async () => {
    await settle();
    const before = openHandles();
    const server = await startTestServer({ script: [{ at: 0, say: 'one two' }] });
    const session = await server.client().stt.realtime.connect();
    session.writePcm16(scriptAudio([{ at: 0, say: 'one two' }]));
    await session.finish();
    // A second session left streaming: close() must end it too.
    const open = await server.client().stt.realtime.connect();
    open.writePcm16(new Int16Array(3200));
    expect(openHandles()).not.toEqual(before);
    await server.close();
    open.close();
    await settle();
    // Nothing more of any kind than before (a timer of an earlier test may have ended meanwhile).
    const after = openHandles();
    for (const [kind, count] of Object.entries(after)) expect({ kind, count }).toEqual({ kind, count: Math.min(count, before[kind] ?? 0) });
    // And both ports are closed.
    for (const url of [server.url, server.service.url]) await expect(fetch(url)).rejects.toThrow();
  });

  it('leaves nothing behind when closed with faults under way (a stall, a held rule, a timed step)', async () => {
    await settle();
    const before = openHandles();
    const server = await startTestServer({ script: [{ at: 0, say: 'one two' }] });
    const session = await server.client().stt.realtime.connect();
    const run = server.playFaults([
      { at: 1_600, do: 'stall', ms: 30_000 },
      { at: 1_600, do: 'withholdAcks', forMs: 30_000 },
      { afterMs: 30_000, do: 'cut' },
    ], { session });
    session.writePcm16(new Int16Array(3_200));
    for (let i = 0; i < 200 && run.fired.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(run.fired.map((f) => f.do)).toEqual(['stall', 'withholdAcks']);
    await server.close();
    session.close();
    await settle();
    const after = openHandles();
    for (const [kind, count] of Object.entries(after)) expect({ kind, count }).toEqual({ kind, count: Math.min(count, before[kind] ?? 0) });
  });

  it('leaves nothing behind when closed with a recording relaying a live socket, a page server and a body trickling', async () => {
    await settle();
    const before = openHandles();
    const server = await startTestServer({ script: [{ at: 0, say: 'one two' }] });
    const recording = await server.record();
    const page = await server.page();
    const app = server.client({ maxRetries: 0 });
    const session = await new SoundClone({ accessKey: server.accessKey, baseUrl: recording.url }).stt.realtime.connect();
    session.writePcm16(new Int16Array(3_200));
    expect((await fetch(page.url)).status).toBe(200);
    const rule = server.faults.http.inject({ path: '/user/info', action: { kind: 'trickle', everyMs: 30_000, bytes: 1 } });
    const trickling = app.user.info().catch((e: unknown) => e);
    // The answer has begun (its first byte sent, the next 30 s away) when the rule was taken.
    for (let i = 0; i < 200 && rule.hits === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(rule.hits).toBe(1);
    await server.close();
    session.close();
    expect(await trickling).toBeInstanceOf(Error);
    await settle();
    const after = openHandles();
    for (const [kind, count] of Object.entries(after)) expect({ kind, count }).toEqual({ kind, count: Math.min(count, before[kind] ?? 0) });
    for (const url of [recording.url, page.url]) await expect(fetch(url)).rejects.toThrow();
  });

  it('refuses use after close() with TESTING_CLOSED; close() is idempotent', async () => {
    const server = await startTestServer();
    await server.close();
    await server.close();
    expect(() => server.client()).toThrow(expect.objectContaining({ code: 'TESTING_CLOSED' }));
    await expect(server.record()).rejects.toMatchObject({ code: 'TESTING_CLOSED' });
    await expect(server.page()).rejects.toMatchObject({ code: 'TESTING_CLOSED' });
  });

  it('logs the app’s requests with the key redacted, and not the kit’s own lookups', async () => {
    const server = await startTestServer({ script: [{ at: 0, say: 'hi' }] });
    started.push(server);
    const session = await server.client().stt.realtime.connect();
    session.writePcm16(scriptAudio([{ at: 0, say: 'hi' }]));
    await session.finish();
    const before = server.requests.length;
    await server.charges(session);
    await server.storedAudio(session);
    expect(server.requests.length).toBe(before);
    expect(server.requests.some((r) => r.method === 'POST' && r.path.endsWith('/stt/realtime/sessions') && r.status === 200)).toBe(true);
    const everything = JSON.stringify([server.requests, server.sockets]);
    expect(everything).not.toContain(server.accessKey);
    expect(everything).not.toMatch(/rtt_[A-Za-z0-9]/);
    expect(server.sockets.map((e) => e.kind)).toEqual(['connected', 'closed']);
  });
});
