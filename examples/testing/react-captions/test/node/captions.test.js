import { after, before, describe, it } from 'node:test';
import { startTestServer } from '@soundclone/testing';
import { cases, openFixture, script } from '../captions.cases.js';

describe('react captions (node:test)', () => {
  /** @type {import('@soundclone/testing').TestServer} */
  let server;
  /** @type {import('../captions.cases.js').Fixture} */
  let fixture;
  before(async () => {
    server = await startTestServer({ script });
    fixture = await openFixture(server);
  });
  after(async () => {
    await fixture?.close();
    await server?.close();
  });
  for (const c of cases) it(c.name, () => c.run(server, fixture));
});
