import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_PREFIX } from '@soundclone/core/internal';
import type { Account } from '../domain/accounts/accounts.js';
import type { Reply } from './envelope.js';

/** What a handler sees: the authenticated account, path parameters and the query. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly requestId: string;
  readonly account: Account;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
}

export type Handler = (context: RequestContext) => Promise<Reply>;

export interface Route {
  readonly method: string;
  /** Template relative to API_PREFIX, e.g. `/voices/rename/{id}` (protocol.ts PATHS). */
  readonly path: string;
  readonly handler: Handler;
}

interface Compiled {
  readonly route: Route;
  readonly pattern: RegExp;
  readonly names: string[];
}

export type Match =
  | { readonly kind: 'found'; readonly route: Route; readonly params: Record<string, string> }
  | { readonly kind: 'method-not-allowed'; readonly allowed: string[] }
  | { readonly kind: 'not-found' };

/** Matches a request path against route templates; `{name}` matches one non-empty segment. */
export class Router {
  private readonly compiled: Compiled[] = [];

  add(route: Route): void {
    const names: string[] = [];
    const source = (API_PREFIX + route.path).replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_m, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    this.compiled.push({ route, pattern: new RegExp(`^${source}/?$`), names });
  }

  match(method: string, path: string): Match {
    const allowed: string[] = [];
    for (const c of this.compiled) {
      const m = c.pattern.exec(path);
      if (m === null) continue;
      if (c.route.method !== method) {
        allowed.push(c.route.method);
        continue;
      }
      const params: Record<string, string> = {};
      let bad = false;
      c.names.forEach((name, i) => {
        try {
          params[name] = decodeURIComponent(m[i + 1] as string);
        } catch {
          bad = true;
        }
      });
      if (bad) continue;
      return { kind: 'found', route: c.route, params };
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
  }
}
