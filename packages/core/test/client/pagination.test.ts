import { describe, expect, it } from 'vitest';
import { PageRequest, type Cursor } from '../../src/client/pagination.js';
import { decodeTtsHasMore } from '../../src/parse/account.js';

/** PageRequest with hand-written pagers standing in for a misbehaving service. */
interface Page {
  readonly items: number[];
  readonly next?: Cursor;
}

function request(pages: Record<string, Page>, log: Array<Cursor | undefined>): PageRequest<Page, number> {
  return new PageRequest<Page, number>({
    fetch: async (cursor) => {
      log.push(cursor);
      const page = pages[String(cursor ?? 'first')];
      if (page === undefined) throw new Error(`no page ${String(cursor)}`);
      return page;
    },
    items: (page) => page.items,
    next: (page) => page.next,
  });
}

async function collect(r: PageRequest<Page, number>): Promise<number[]> {
  const out: number[] = [];
  for await (const item of r) out.push(item);
  return out;
}

describe('PageRequest', () => {
  it('sends nothing until awaited or iterated; await gives the first page', async () => {
    const log: Array<Cursor | undefined> = [];
    const r = request({ first: { items: [1, 2], next: 'b' }, b: { items: [3] } }, log);
    expect(log).toEqual([]);
    expect((await r).items).toEqual([1, 2]);
    expect(await collect(r)).toEqual([1, 2, 3]);
    expect(log).toEqual([undefined, 'b']);
  });

  it('stops on an empty page, a cursor that does not move, and a cursor that comes back', async () => {
    expect(await collect(request({ first: { items: [1], next: 'b' }, b: { items: [], next: 'c' }, c: { items: [9] } }, []))).toEqual([1]);
    expect(await collect(request({ first: { items: [1], next: 'b' }, b: { items: [2], next: 'b' } }, []))).toEqual([1, 2]);
    expect(await collect(request({ first: { items: [1], next: 'b' }, b: { items: [2], next: 'c' }, c: { items: [3], next: 'b' } }, []))).toEqual([1, 2, 3]);
  });

  it('propagates a failing page to the loop', async () => {
    await expect(collect(request({ first: { items: [1], next: 'missing' } }, []))).rejects.toThrow('no page missing');
    await expect(request({}, [])).rejects.toThrow('no page undefined');
  });
});

describe('TTS hasMore (inverted in the spec)', () => {
  it('1 means no earlier item, 0 means earlier items remain; booleans read as 1/0; anything else is an error', () => {
    expect(decodeTtsHasMore(1, 'p')).toBe(false);
    expect(decodeTtsHasMore(0, 'p')).toBe(true);
    expect(decodeTtsHasMore(true, 'p')).toBe(false);
    expect(decodeTtsHasMore(false, 'p')).toBe(true);
    for (const bad of [2, '1', null, undefined]) expect(() => decodeTtsHasMore(bad, 'data.hasMore')).toThrow(/data\.hasMore/);
  });
});
