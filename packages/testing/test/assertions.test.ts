import { afterEach, describe, expect, it } from 'vitest';
import { encodeLikeSdk, scriptAudio, startTestServer, toWav, type SpeechScript, type TestServer } from '@soundclone/testing';

const SCRIPT: SpeechScript = [{ at: '0.2s', say: 'charge me for this' }, { at: '2s', say: 'and this' }];

describe('assertions', () => {
  let server: TestServer;
  afterEach(() => server.close());

  it('charges(): a realtime session is billed for the audio it received, settled at finish', async () => {
    server = await startTestServer({ script: SCRIPT });
    const session = await server.client().stt.realtime.connect();
    const pcm = scriptAudio(SCRIPT);
    session.writePcm16(pcm);
    await session.finish();
    const byObject = await server.charges(session);
    expect(byObject.state).toBe('SETTLED');
    expect(byObject.billableDurationMs).toBe(BigInt(Math.round(pcm.length / 16)));
    expect(byObject.billableCharacters).toBeGreaterThan(0n);
    expect(await server.charges(session.sessionId)).toEqual(byObject);
    expect(await server.charges(byObject.transcriptionId)).toEqual(byObject);
  });

  it('charges(): a batch task of scripted audio, by transcription id', async () => {
    server = await startTestServer({ script: SCRIPT });
    const client = server.client();
    const { uploadId } = await client.uploads.create(toWav(scriptAudio(SCRIPT)), { contentType: 'audio/wav' });
    const task = await client.stt.transcriptions.create({ uploadId, waitForCompletion: true });
    expect(task.status).toBe('COMPLETED');
    const charges = await server.charges({ transcriptionId: task.transcriptionId });
    expect(charges.billableCharacters).toBe(task.billing.billableCharacters);
    expect(charges.billableCharacters).toBeGreaterThan(0n);
  });

  it('storedAudio(): what the app captured at 48 kHz, through the SDK’s encode path, sample for sample', async () => {
    server = await startTestServer();
    const session = await server.client().stt.realtime.connect({ sampleRate: 48_000 });
    // Three seconds of a capture: a sweep with a little seeded noise (every sample value matters).
    const captured = new Float32Array(48_000 * 3);
    for (let i = 0; i < captured.length; i++) captured[i] = 0.3 * Math.sin((2 * Math.PI * (200 + i / 400) * i) / 48_000) + (((Math.imul(i, 2654435761) >>> 20) % 64) - 32) / 32_768;
    for (let at = 0; at < captured.length; at += 480) session.write(captured.subarray(at, at + 480));
    await session.finish();
    const stored = await server.storedAudio(session);
    const expected = encodeLikeSdk(captured, 48_000);
    expect(stored.length).toBe(expected.length);
    expect(stored).toEqual(expected);
  });

  it('storedAudio() of a session the server does not know is TESTING_NOT_FOUND', async () => {
    server = await startTestServer();
    await expect(server.storedAudio('rs_nope')).rejects.toMatchObject({ code: 'TESTING_NOT_FOUND' });
  });
});
