import type { RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, startTestServer } from './support/harness.js';

/** The connection limits a client should know reach it through capabilities, as configured on the server. */
describe('capabilities: connection limits', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startTestServer({ http: { responseStallMs: 7000 }, socket: { maxBufferedBytes: 8 << 20 } });
  });
  afterAll(() => server.close());

  it('states the HTTP and socket limits in force', async () => {
    const capabilities = await clientFor(server).stt.capabilities();
    expect(capabilities.limits?.http).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 120_000, keepAliveTimeoutMs: 5_000, responseStallMs: 7000, jsonBodyMaxBytes: 1 << 20 });
    expect(capabilities.limits?.socket).toMatchObject({ maxBufferedBytes: 8 << 20, slowConsumerGraceMs: 5000 });
  });
});
