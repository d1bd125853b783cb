import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTestServer } from '@soundclone/testing';
import { cases, script } from '../worker.cases.js';

describe('captions worker (vitest)', () => {
  /** @type {import('@soundclone/testing').TestServer} */
  let server;
  beforeAll(async () => {
    server = await startTestServer({ script });
  });
  afterAll(() => server.close());
  for (const c of cases) it(c.name, () => c.run(server));
});
