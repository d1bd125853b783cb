import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTestServer } from '@soundclone/testing';
import { cases, openFixture, script } from '../captions.cases.js';

describe('react captions (vitest)', () => {
  /** @type {import('@soundclone/testing').TestServer} */
  let server;
  /** @type {import('../captions.cases.js').Fixture} */
  let fixture;
  beforeAll(async () => {
    server = await startTestServer({ script });
    fixture = await openFixture(server);
  });
  afterAll(async () => {
    await fixture?.close();
    await server?.close();
  });
  for (const c of cases) it(c.name, () => c.run(server, fixture));
});
