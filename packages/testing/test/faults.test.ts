import { afterEach, describe, expect, it } from 'vitest';
import type { RealtimeSocketSession } from '@soundclone/core';
import { SCENARIOS, scenario, scriptAudio, startTestServer, type SpeechScript, type TestServer } from '@soundclone/testing';

const SCRIPT: SpeechScript = [
  { at: '0.3s', say: 'first line here' },
  { at: '1.8s', say: 'second line follows' },
  { at: '3.3s', say: 'third and last' },
];
const PCM = scriptAudio(SCRIPT);
const SAID = SCRIPT.map((l) => l.say);

/** Writes the audio in 20 ms frames, yielding now and then, as a capture would (faster than real time). */
async function stream(session: RealtimeSocketSession, pcm: Int16Array): Promise<void> {
  for (let at = 0, n = 0; at < pcm.length; at += 320, n++) {
    session.writePcm16(pcm.subarray(at, at + 320));
    if (n % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('fault steps', () => {
  let server: TestServer;
  afterEach(() => server.close());

  it('cuts the connection at a sample position; the session recovers with every sample stored once', async () => {
    server = await startTestServer({ script: SCRIPT });
    const session = await server.client().stt.realtime.connect();
    const run = server.playFaults([{ at: '1s', do: 'cut' }], { session });
    const reconnected: number[] = [];
    session.on('reconnected', (info) => reconnected.push(info.attempt));
    await stream(session, PCM);
    const result = await session.finish();
    expect(run.fired.map((f) => f.do)).toEqual(['cut']);
    const at = Number(run.fired[0]?.receivedSamples);
    expect(at).toBeGreaterThanOrEqual(16_000);
    expect(at).toBeLessThan(16_000 + 320 * 4);
    expect(reconnected.length).toBeGreaterThanOrEqual(1);
    expect(result.session.status).toBe('COMPLETED');
    expect(result.lines.map((l) => l.text)).toEqual(SAID);
    expect(await server.storedAudio(session)).toEqual(PCM);
  });

  it('rotates the session at a position and binds to the first session heard when none is named', async () => {
    server = await startTestServer({ script: SCRIPT });
    const run = server.playFaults([{ at: '1.5s', do: 'rotate' }]);
    const session = await server.client().stt.realtime.connect();
    const rotations: number[] = [];
    session.on('rotated', (info) => rotations.push(info.toEpoch));
    await stream(session, PCM);
    const result = await session.finish();
    expect(run.sessionId).toBe(session.sessionId);
    expect(rotations).toEqual([2]);
    expect(result.lines.map((l) => [l.text, l.epoch])).toEqual([[SAID[0], 1], [SAID[1], 2], [SAID[2], 2]]);
    expect(await server.storedAudio(session)).toEqual(PCM);
  });

  it('withholds and delays acks for a while and closes the socket from the service', async () => {
    server = await startTestServer({ script: SCRIPT });
    const session = await server.client().stt.realtime.connect();
    const run = server.playFaults([
      { at: '0.5s', do: 'withholdAcks', forMs: 300 },
      { at: '2s', do: 'close', code: 4000 },
      { at: '3s', do: 'delayAcks', ms: 150, forMs: 500 },
    ], { session });
    await stream(session, PCM);
    const result = await session.finish();
    expect(run.fired.map((f) => f.do)).toEqual(['withholdAcks', 'close', 'delayAcks']);
    expect(run.pending).toBe(0);
    // The service closed the first socket; the SDK came back on a second one.
    expect(server.sockets.find((e) => e.kind === 'closed')?.detail).toEqual({ code: 4000, reason: 'scripted close' });
    expect(new Set(server.sockets.filter((e) => e.kind === 'connected').map((e) => e.connectionId)).size).toBe(2);
    expect(result.session.status).toBe('COMPLETED');
    expect(await server.storedAudio(session)).toEqual(PCM);
  });

  it('half-opens the link: the SDK notices by heartbeat and resumes on a new connection', async () => {
    server = await startTestServer({ script: SCRIPT, server: { socket: { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 600 } } });
    const session = await server.client().stt.realtime.connect({ heartbeatTimeoutMs: 600 });
    const run = server.playFaults([{ at: '1s', do: 'halfOpen' }], { session });
    const reconnected: number[] = [];
    session.on('reconnected', (info) => reconnected.push(info.attempt));
    await stream(session, PCM);
    const result = await session.finish();
    expect(run.fired.map((f) => f.do)).toEqual(['halfOpen']);
    expect(reconnected.length).toBeGreaterThanOrEqual(1);
    expect(result.lines.map((l) => l.text)).toEqual(SAID);
    expect(await server.storedAudio(session)).toEqual(PCM);
  });

  it('withholds one kind of supplement and delays another, for this session only', async () => {
    server = await startTestServer({ script: SCRIPT, server: { realtimeTiming: { supplementWaitMs: 800 } } });
    const session = await server.client().stt.realtime.connect({ options: { includeDetectedLanguage: true, includeAlignment: true } });
    const run = server.playFaults([
      { at: 0, do: 'withholdSupplements', kinds: ['language'] },
      { at: 0, do: 'delaySupplements', ms: 200, kinds: ['alignment'] },
    ], { session });
    await stream(session, PCM);
    const result = await session.finish();
    expect(run.fired).toHaveLength(2);
    expect(result.lines.map((l) => [l.languageCode, l.words.length])).toEqual([[null, 3], [null, 3], [null, 3]]);
    expect(result.notices.map((n) => [n.code, n.supplements])).toEqual([['SUPPLEMENT_NOT_RECEIVED', ['language']]]);
    // Another session on the same server is not affected.
    const other = await server.client().stt.realtime.connect({ options: { includeDetectedLanguage: true } });
    other.writePcm16(PCM);
    expect((await other.finish()).lines.map((l) => l.languageCode)).toEqual(['en', 'en', 'en']);
  });

  it('refuses a step it cannot run, naming it', async () => {
    server = await startTestServer();
    expect(() => server.playFaults([{ at: '1s', do: 'explode' } as never])).toThrow(expect.objectContaining({ code: 'TESTING_INVALID_FAULT', message: expect.stringContaining('steps[0].do') }));
    expect(() => server.playFaults([{ at: '1s', do: 'stall' } as never])).toThrow(expect.objectContaining({ code: 'TESTING_INVALID_FAULT', message: expect.stringContaining('steps[0].ms') }));
    expect(() => scenario('flaky-wifi', { audio: '0.5s' })).toThrow(expect.objectContaining({ code: 'TESTING_INVALID_FAULT' }));
  });
});

describe('named scenarios', () => {
  it('draws the same steps from the same seed, other steps from another', () => {
    for (const name of SCENARIOS) {
      const a = scenario(name, { audio: '30s', seed: 7 });
      expect(scenario(name, { audio: '30s', seed: 7 })).toEqual(a);
      expect(a.length).toBeGreaterThan(0);
      for (const step of a) expect(Number(step.at)).toBeLessThanOrEqual(480_000);
    }
    expect(scenario('flaky-wifi', { audio: '30s', seed: 8 })).not.toEqual(scenario('flaky-wifi', { audio: '30s', seed: 7 }));
    expect(scenario('rotation-storm', { audio: '30s', seed: 8 })).not.toEqual(scenario('rotation-storm', { audio: '30s', seed: 7 }));
  });

  for (const name of SCENARIOS) {
    it(`${name}: the session completes with every line and every sample`, async () => {
      const server = await startTestServer({ script: SCRIPT });
      try {
        const session = await server.client().stt.realtime.connect();
        const run = server.playFaults(scenario(name, { audio: PCM.length, seed: 3 }), { session });
        await stream(session, PCM);
        const result = await session.finish();
        expect(run.pending).toBe(0);
        expect(result.session.status).toBe('COMPLETED');
        // A rotation commits mid-line: the words are all there, the line breaks may differ.
        expect(result.lines.map((l) => l.text).join(' ')).toBe(SAID.join(' '));
        expect(await server.storedAudio(session)).toEqual(PCM);
      } finally {
        await server.close();
      }
    });
  }
});

describe('REST faults (the service’s own injection)', () => {
  let server: TestServer;
  afterEach(() => server.close());

  it('answers 429 with Retry-After once; the SDK waits and retries, the log shows both', async () => {
    server = await startTestServer();
    server.faults.http.inject({ method: 'POST', path: '/stt/realtime/sessions', action: { kind: 'status', status: 429, retryAfterSec: 1 } });
    const started = performance.now();
    await server.client().stt.realtime.create();
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    const creates = server.requests.filter((r) => r.method === 'POST');
    expect(creates.map((r) => r.status)).toEqual([429, 200]);
    expect(creates[0]?.idempotencyKey).toBe(creates[1]?.idempotencyKey);
  });

  it('drops the answer after processing; the retry with the same key gets the same session, charged once', async () => {
    server = await startTestServer({ script: [{ at: 0, say: 'once' }] });
    server.faults.http.inject({ method: 'POST', path: '/stt/realtime/sessions', action: { kind: 'dropAfterProcessing' } });
    const session = await server.client().stt.realtime.connect();
    const creates = server.requests.filter((r) => r.method === 'POST');
    expect(creates.map((r) => r.status)).toEqual(['dropped', 200]);
    session.writePcm16(scriptAudio([{ at: 0, say: 'once' }]));
    await session.finish();
    const charges = await server.charges(session);
    expect(charges.state).toBe('SETTLED');
    // One task was made for the two attempts: the second answered the first's.
    const tasks: string[] = [];
    for await (const item of server.client().stt.transcriptions.list()) tasks.push(item.transcriptionId);
    expect(tasks).toEqual([charges.transcriptionId]);
  });
});
