import type { RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, KEY_A, startTestServer } from '../rest/support/harness.js';

/**
 * The reference service's realtime REST bodies, sent raw (as another client could): a count that was
 * sent but is wrong is told apart from one that is missing.
 */
describe('reference service: pause and finish bodies', () => {
  let server: RunningServer;
  let sessionId: string;
  beforeAll(async () => {
    server = await startTestServer();
    sessionId = (await clientFor(server).stt.realtime.create({})).sessionId;
  });
  afterAll(() => server.close());

  const post = async (action: 'pause' | 'finish', body: string | undefined): Promise<{ status: number; rule: string | undefined }> => {
    const response = await fetch(`${server.url}/sound_clone/api/v1/stt/realtime/sessions/${sessionId}/${action}`, {
      method: 'POST',
      headers: { accessKey: KEY_A, 'Content-Type': 'application/json' },
      ...(body !== undefined ? { body } : {}),
    });
    const envelope = (await response.json()) as { details?: { violations?: Array<{ field: string; rule: string }> } };
    return { status: response.status, rule: envelope.details?.violations?.find((v) => v.field === 'capturedSamples')?.rule };
  };

  it.each([
    ['-1', '{"capturedSamples":-1}'],
    ['1.5', '{"capturedSamples":1.5}'],
    ['"01"', '{"capturedSamples":"01"}'],
    ['"12abc"', '{"capturedSamples":"12abc"}'],
  ])('capturedSamples %s is "must be", not "is required"', async (_label, body) => {
    for (const action of ['pause', 'finish'] as const) {
      expect(await post(action, body)).toEqual({ status: 400, rule: 'must be a non-negative integer as a decimal string (or a JSON number)' });
    }
  });

  it('a missing capturedSamples is "is required"', async () => {
    expect(await post('pause', '{}')).toEqual({ status: 400, rule: 'is required: a non-negative integer as a decimal string (or a JSON number)' });
  });
});
