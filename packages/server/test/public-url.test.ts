import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SoundClone } from '@soundclone/core';
import { ChaosProxy, SERVER_USAGE, ServerFlagError, parseServerFlags, startServer } from '../src/index.js';
import { normalizePublicUrl } from '../src/public-url.js';
import { KEY_A, start, type TestServer } from './support/server.js';
import { speech } from './realtime/support.js';

/**
 * publicUrl: where clients reach the service when a balancer or proxy stands in front of it. What
 * stands in for the balancer here is the ChaosProxy, a plain 127.0.0.1 TCP forwarder (no faults asked).
 */
describe('publicUrl', () => {
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  it('takes an absolute http(s) URL, normalized; anything else is a TypeError that says what is wrong', async () => {
    expect(normalizePublicUrl('https://speech.example.com/')).toBe('https://speech.example.com');
    expect(normalizePublicUrl('http://10.0.0.5:8080/stt//')).toBe('http://10.0.0.5:8080/stt');
    expect(normalizePublicUrl('HTTPS://Speech.Example.com:443')).toBe('https://speech.example.com');
    const refused: Array<[unknown, RegExp]> = [
      ['', /absolute http\(s\) URL/],
      ['speech.example.com', /absolute http\(s\) URL/],
      ['/sound_clone', /absolute http\(s\) URL/],
      ['ws://speech.example.com', /http: or https:/],
      ['ftp://speech.example.com', /http: or https:/],
      ['https://user:secret@speech.example.com', /credentials/],
      ['https://speech.example.com/?x=1', /query or fragment/],
      ['https://speech.example.com/#top', /query or fragment/],
      [42, /absolute http\(s\) URL/],
    ];
    for (const [value, message] of refused) expect(() => normalizePublicUrl(value), String(value)).toThrow(message);
    await expect(startServer({ accessKeys: ['k'], publicUrl: 'speech.example.com' })).rejects.toThrow(TypeError);
  });

  it('--public-url maps to publicUrl, checked the same way', () => {
    expect(parseServerFlags(['--access-key', 'k', '--public-url', 'https://lb.example:8443/']).options.publicUrl).toBe('https://lb.example:8443');
    expect(parseServerFlags(['--access-key', 'k']).options).not.toHaveProperty('publicUrl');
    expect(() => parseServerFlags(['--access-key', 'k', '--public-url', 'lb.example'])).toThrow(ServerFlagError);
    expect(() => parseServerFlags(['--access-key', 'k', '--public-url', 'lb.example'])).toThrow(/--public-url: publicUrl must be an absolute http\(s\) URL/);
    expect(SERVER_USAGE).toContain('[--public-url URL]');
  });

  it('without it the socket URLs name the listen address', async () => {
    const server = await start();
    stops.push(() => server.close());
    expect(server.publicUrl).toBe(server.url);
    const created = await server.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': `pu-${Date.now()}` } });
    expect(created.body.data.socket.url).toBe(`${server.url.replace(/^http/, 'ws')}/sound_clone/api/v1/stt/realtime/socket`);
  });

  it('hands out socket URLs on the public origin, and the SDK streams through the balancer standing there', async () => {
    // The node's own port first, so the forwarder in front of it exists before the node starts.
    const nodePort = await freePort();
    const balancer = await new ChaosProxy(nodePort).listen();
    stops.push(() => balancer.close());
    const publicUrl = `http://127.0.0.1:${balancer.port}/`;
    const server: TestServer = await start({ port: nodePort, publicUrl, retainRealtimeAudioSamples: 5 * 16_000 });
    stops.push(() => server.close());
    expect(server.url).toBe(`http://127.0.0.1:${nodePort}`);
    expect(server.publicUrl).toBe(`http://127.0.0.1:${balancer.port}`);
    const socketUrl = `ws://127.0.0.1:${balancer.port}/sound_clone/api/v1/stt/realtime/socket`;

    // REST straight to the node: every connection the balancer sees is a socket opened from a URL the service handed out.
    const client = new SoundClone({ accessKey: KEY_A, baseUrl: server.url });
    const session = await client.stt.realtime.connect({});
    expect(balancer.connections).toBe(1);
    const refreshed = await server.call('POST', `/stt/realtime/sessions/${session.sessionId}/socket-token`, { json: {} });
    expect(refreshed.body.data.url).toBe(socketUrl);
    const created = await server.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': `pu-${Date.now()}` } });
    expect(created.body.data.socket.url).toBe(socketUrl);

    const pcm = speech(2).subarray(0, 2 * 16_000);
    for (let at = 0; at < pcm.length; at += 320) session.writePcm16(pcm.subarray(at, at + 320));
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(balancer.connections).toBe(1);
    expect(server.sockets.log.some((e) => e.sessionId === session.sessionId && e.kind === 'connected')).toBe(true);
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
