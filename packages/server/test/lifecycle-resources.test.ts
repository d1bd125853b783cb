import { describe, expect, it } from 'vitest';
import { idem, KEY_A, start, upload } from './support/server.js';
import { speechWav } from './support/wav.js';

/** close() ends every timer, socket and pending retry the server started (style guide: nothing outlives a call). */
describe('server lifetime', () => {
  it('leaves no handles behind after start, busy work and close, 20 times over', async () => {
    const count = () => process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length;
    const baseline = count();
    for (let i = 0; i < 20; i++) {
      const server = await start({ taskTiming: { queueMs: 1, processingMs: 60_000, reconcilingMs: 1 }, webhookRetryDelaysMs: [60_000] });
      const uploadId = await upload(server, speechWav());
      const r = await server.call('POST', '/stt/transcriptions', { json: { uploadId }, headers: { 'Idempotency-Key': idem() } });
      expect(r.body.data.status).toBe('QUEUED');
      const session = await server.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } });
      expect(session.body.code).toBe(1);
      await server.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(count()).toBeLessThanOrEqual(baseline);
  });

  it('refuses a realtime session when no Characters are left', async () => {
    const server = await start({ accountOverrides: { [KEY_A]: { totalMonthlyChars: 0, totalOrderChars: 0 } } });
    try {
      const r = await server.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } });
      expect(r.status).toBe(402);
      expect(r.body.errorCode).toBe('INSUFFICIENT_CHARACTERS');
    } finally {
      await server.close();
    }
  });
});
