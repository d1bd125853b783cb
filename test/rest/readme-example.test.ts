import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SoundClone } from '@soundclone/core';
import type { RunningServer } from '@soundclone/server';
import { KEY_A, startTestServer } from './support/harness.js';
import { wav } from './support/audio.js';

/** The README's "client in five lines", run as written (with the file and URL made here). */
let server: RunningServer;
let dir: string;
beforeAll(async () => {
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'readme-'));
  writeFileSync(join(dir, 'meeting.wav'), wav());
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

it('the README client example transcribes a file from a Node path', async () => {
  const client = new SoundClone({ accessKey: KEY_A, baseUrl: server.url });
  const { uploadId } = await client.uploads.create(join(dir, 'meeting.wav'));
  const task = await client.stt.transcriptions.create({ uploadId, waitForCompletion: true });
  const text = (await client.stt.transcriptions.wait(task.transcriptionId)).transcript?.text;
  expect(typeof text).toBe('string');
  expect(text!.length).toBeGreaterThan(0);
});
