// Cursor pagination: a list call is awaitable for its first page and iterable over every item of
// every page, following `pagination.next`.
import { AegisError } from './errors.ts';
import type { APIClient, RequestOptions, RequestSpec } from './transport.ts';

export interface Pagination {
  /** Cursor of the next page; null on the last page. */
  next: string | null;
  [key: string]: unknown;
}

/** One page of a list. `data` is the API's own array: no per-item wrapping. */
export class Page<Item> {
  readonly data: Item[];
  readonly pagination: Pagination;

  constructor(
    private readonly client: APIClient,
    private readonly spec: RequestSpec,
    private readonly options: RequestOptions | undefined,
    body: { data: Item[]; pagination: Pagination },
  ) {
    this.data = body.data;
    this.pagination = body.pagination;
  }

  hasNextPage(): boolean {
    return typeof this.pagination?.next === 'string' && this.pagination.next !== '';
  }

  /** The next page; throws when there is none (check `hasNextPage()`). */
  async nextPage(): Promise<Page<Item>> {
    if (!this.hasNextPage()) throw new AegisError('No next page');
    return fetchPage<Item>(this.client, { ...this.spec, query: { ...(this.spec.query ?? {}), cursor: this.pagination.next } }, this.options);
  }

  /** This page's items, then every following page's. */
  [Symbol.asyncIterator](): AsyncIterator<Item> {
    return itemIterator<Item>(Promise.resolve(this));
  }
}

/**
 * Items of `first` and the pages after it. Written by hand rather than as an async generator: one
 * already-resolved promise per item, no generator frames, so paging costs what raw paging costs.
 */
function itemIterator<Item>(first: Promise<Page<Item>>): AsyncIterator<Item> {
  let page: Page<Item> | undefined;
  let pending: Promise<Page<Item>> | undefined = first;
  let index = 0;
  const next = async (): Promise<IteratorResult<Item>> => {
    for (;;) {
      if (pending) {
        page = await pending;
        pending = undefined;
        index = 0;
      }
      if (!page) return { done: true, value: undefined };
      if (index < page.data.length) return { done: false, value: page.data[index++]! };
      if (!page.hasNextPage()) {
        page = undefined;
        return { done: true, value: undefined };
      }
      pending = page.nextPage();
    }
  };
  return {
    next(): Promise<IteratorResult<Item>> {
      // The common case (an item of the current page) without an async function's extra ticks.
      if (!pending && page && index < page.data.length) return Promise.resolve({ done: false, value: page.data[index++]! });
      return next();
    },
    return(): Promise<IteratorResult<Item>> {
      page = undefined;
      pending = undefined;
      return Promise.resolve({ done: true, value: undefined });
    },
  };
}

async function fetchPage<Item>(client: APIClient, spec: RequestSpec, options: RequestOptions | undefined): Promise<Page<Item>> {
  const body = await client.request<{ data: Item[]; pagination: Pagination }>({ ...spec, response: 'json' }, options);
  return new Page<Item>(client, spec, options, body);
}

/**
 * The answer of a list method: `await` it for the first page, or `for await` over it for every item
 * of every page (following `pagination.next` as `cursor`). `pages()` iterates page by page.
 */
export class PagePromise<Item> implements PromiseLike<Page<Item>>, AsyncIterable<Item> {
  private first: Promise<Page<Item>> | undefined;

  constructor(
    private readonly client: APIClient,
    private readonly spec: RequestSpec,
    private readonly options: RequestOptions | undefined,
  ) {}

  /** The first page, requested once however often it is awaited. */
  private firstPage(): Promise<Page<Item>> {
    this.first ??= fetchPage<Item>(this.client, this.spec, this.options);
    return this.first;
  }

  then<R1 = Page<Item>, R2 = never>(onFulfilled?: ((page: Page<Item>) => R1 | PromiseLike<R1>) | null, onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null): Promise<R1 | R2> {
    return this.firstPage().then(onFulfilled, onRejected);
  }

  catch<R = never>(onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<Page<Item> | R> {
    return this.firstPage().catch(onRejected);
  }

  /** Every page, starting with the first. */
  async *pages(): AsyncGenerator<Page<Item>, void, undefined> {
    let page = await this.firstPage();
    for (;;) {
      yield page;
      if (!page.hasNextPage()) return;
      page = await page.nextPage();
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<Item> {
    return itemIterator<Item>(this.firstPage());
  }

  /** Every item of every page, in one array. */
  async toArray(): Promise<Item[]> {
    const all: Item[] = [];
    for await (const page of this.pages()) for (const item of page.data) all.push(item);
    return all;
  }
}
