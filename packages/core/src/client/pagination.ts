/**
 * A list call returns a PageRequest (style guide "REST": lists are for-await-able on the un-awaited
 * call, as openai-node's PagePromise):
 *
 *   const first = await client.stt.transcriptions.list();          // the first page
 *   for await (const item of client.stt.transcriptions.list()) {}  // every item, page by page
 *
 * Nothing is sent until the request is awaited or iterated (so an unused call cannot leave an
 * unhandled rejection behind), and both share one first-page request. The pager decides the next
 * page from the previous one; returning undefined ends the walk. Every pager also ends on an empty
 * page, which together with each pager's own cursor check means a misbehaving service cannot make the
 * iteration loop forever.
 */
export interface Pager<Page, Item> {
  /** Fetches one page; `cursor` is undefined for the first. */
  fetch(cursor: Cursor | undefined): Promise<Page>;
  items(page: Page): readonly Item[];
  /** The cursor of the page after `page`, or undefined at the end. */
  next(page: Page, cursor: Cursor | undefined): Cursor | undefined;
}

export type Cursor = string | number;

export class PageRequest<Page, Item> implements PromiseLike<Page>, AsyncIterable<Item> {
  private first: Promise<Page> | undefined;

  constructor(private readonly pager: Pager<Page, Item>) {}

  private firstPage(): Promise<Page> {
    this.first ??= this.pager.fetch(undefined);
    return this.first;
  }

  then<A = Page, B = never>(onFulfilled?: ((page: Page) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.firstPage().then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page | B> {
    return this.firstPage().catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<Page> {
    return this.firstPage().finally(onFinally);
  }

  /** Every page in order, starting with the first. */
  async *pages(): AsyncGenerator<Page, void, undefined> {
    let cursor: Cursor | undefined;
    let page = await this.firstPage();
    const seen = new Set<Cursor>();
    for (;;) {
      yield page;
      if (this.pager.items(page).length === 0) return;
      const next = this.pager.next(page, cursor);
      // A cursor that does not move, or comes back, would repeat pages forever.
      if (next === undefined || next === cursor || seen.has(next)) return;
      seen.add(next);
      cursor = next;
      page = await this.pager.fetch(cursor);
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) yield* this.pager.items(page);
  }
}
