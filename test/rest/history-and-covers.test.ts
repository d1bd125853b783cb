import type { RunningServer } from '@soundclone/server';
import { BatchIncompleteError, SoundClone, ValidationError, type TtsHistoryItem } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_B, clientFor, rejectionOf, requestsTo, startTestServer } from './support/harness.js';

/** TTS history paging (inverted hasMore) and cover deletion in batches, over real HTTP. */
describe('tts history and covers', () => {
  let server: RunningServer;
  let a: SoundClone;
  let b: SoundClone;

  beforeAll(async () => {
    server = await startTestServer({ ttsHistorySeedCount: 2500, coverSeedCount: 1200 });
    a = clientFor(server);
    b = clientFor(server, { accessKey: KEY_B });
  });
  afterAll(() => server.close());

  it('awaiting list() gives the first page, newest first, with hasMore decoded', async () => {
    const page = await a.tts.list({ limit: 10 });
    expect(page.list).toHaveLength(10);
    expect(page.list[0]?.id).toBe('tts-1-2500');
    expect(page.hasMore).toBe(0); // inverted: 0 = earlier items remain
    expect(page.hasEarlierItems).toBe(true);
    expect(page.earliestHistoryItemId).toBe('tts-1-2491');
    const last = await a.tts.list({ limit: 10, startBeforeTTSId: 'tts-1-11' });
    expect(last.hasMore).toBe(1);
    expect(last.hasEarlierItems).toBe(false);
    expect(last.list.map((i) => i.id).at(-1)).toBe('tts-1-1');
  });

  it('pages through all 2,500 items with for await, each once, and stops', async () => {
    const from = server.requests.length;
    const seen: TtsHistoryItem[] = [];
    for await (const item of a.tts.list({ limit: 1000 })) seen.push(item);
    expect(seen).toHaveLength(2500);
    expect(new Set(seen.map((i) => i.id)).size).toBe(2500);
    expect(seen[0]?.id).toBe('tts-1-2500');
    expect(seen.at(-1)?.id).toBe('tts-1-1');
    // 1000 + 1000 + 500: the third page says no earlier item remains, so no fourth request.
    expect(requestsTo(server, 'GET', '/tts/list', from)).toHaveLength(3);
  });

  it('walks pages with the default limit and an awaited request can be iterated too', async () => {
    const pages = a.tts.list({ limit: 500, startBeforeTTSId: 'tts-1-1001' });
    const first = await pages;
    expect(first.list[0]?.id).toBe('tts-1-1000');
    let count = 0;
    for await (const page of pages.pages()) count += page.list.length;
    expect(count).toBe(1000);
  });

  it('checks limit 10..1000 on the client, at and past each boundary', async () => {
    expect((await a.tts.list({ limit: 10 })).list).toHaveLength(10);
    expect((await a.tts.list({ limit: 1000 })).list).toHaveLength(1000);
    expect(() => a.tts.list({ limit: 9 })).toThrow(ValidationError);
    expect(() => a.tts.list({ limit: 1001 })).toThrow(ValidationError);
  });

  it('deletes 1,200 ids in batches of 500 and merges every outcome', async () => {
    const own = Array.from({ length: 1100 }, (_, i) => `cover-1-${String(i + 1).padStart(4, '0')}`);
    const others = ['cover-2-0001', 'cover-2-0002'];
    const missing = Array.from({ length: 98 }, (_, i) => `cover-x-${i}`);
    const ids = [...own, ...others, ...missing];
    expect(ids).toHaveLength(1200);
    const from = server.requests.length;
    const result = await a.covers.delete(ids);
    expect(requestsTo(server, 'DELETE', '/cover', from)).toHaveLength(3);
    expect(result.succeedIds).toHaveLength(1100);
    expect(result.unMatchIds).toEqual(others);
    expect(result.nonExistIds).toEqual(missing);
    // Deleted ids are gone; the other account's covers are untouched.
    const again = await a.covers.delete(own.slice(0, 3));
    expect(again.nonExistIds).toEqual(own.slice(0, 3));
    expect((await b.covers.delete(['cover-2-0001'])).succeedIds).toEqual(['cover-2-0001']);
  });

  it('an empty id list sends nothing; a failed batch reports what was done and what was left', async () => {
    const from = server.requests.length;
    expect(await a.covers.delete([])).toEqual({ succeedIds: [], nonExistIds: [], unMatchIds: [] });
    expect(server.requests.length).toBe(from);
    // The first batch succeeds; the second gets an injected 500 and the client is told not to retry.
    const ids = Array.from({ length: 600 }, (_, i) => `cover-1-${String(i + 1101).padStart(4, '0')}`);
    let calls = 0;
    const failing = clientFor(server, {
      maxRetries: 0,
      fetch: async (input, init) => {
        calls += 1;
        if (calls === 2) server.faults.inject({ method: 'DELETE', path: '/cover', action: { kind: 'status', status: 500 } });
        return fetch(input, init);
      },
    });
    const error = await rejectionOf(failing.covers.delete(ids));
    expect(error).toBeInstanceOf(BatchIncompleteError);
    const incomplete = error as BatchIncompleteError<{ succeedIds: string[]; nonExistIds: string[] }>;
    expect(incomplete.completed.succeedIds.length + incomplete.completed.nonExistIds.length).toBe(500);
    expect(incomplete.remainingIds).toEqual(ids.slice(500));
    expect((incomplete.cause as { status?: number }).status).toBe(500);
  });
});
