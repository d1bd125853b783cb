import { after, before, describe, it } from 'node:test';
import { startTestServer } from '@soundclone/testing';
import { cases, script } from '../worker.cases.js';

describe('captions worker (node:test)', () => {
  /** @type {import('@soundclone/testing').TestServer} */
  let server;
  before(async () => {
    server = await startTestServer({ script });
  });
  after(() => server.close());
  for (const c of cases) it(c.name, () => c.run(server));
});
