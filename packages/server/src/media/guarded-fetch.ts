import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { ApiError } from '../errors.js';
import { MAX_REDIRECTS } from '../protocol.js';
import { isIpLiteral, refusalForAddress, refusalForName, type RefusalKind } from './address-policy.js';

/**
 * Fetches a URL for the service (mediaUrl downloads, webhook posts) over a real connection, re-checking
 * every hop (spec "POST /stt/transcriptions" mediaUrl, "Errors" 4).
 *
 *   URL --parse (WHATWG: normalises 2130706433, 0x7f000001, 0177.0.0.1, 127.1)--> host
 *   host is an IP literal --> policy check, then connect to exactly it
 *   host is a name        --> socket `lookup` resolves, checks EVERY address, hands only checked ones to
 *                             the socket: the address checked is the address connected to (no TOCTOU)
 *   3xx + Location        --> next hop, same checks, at most MAX_REDIRECTS
 *
 * `allowHosts` ("host:port", test-only) lets exactly that host and port skip the address policy.
 */
export interface GuardOptions {
  readonly allowHosts: ReadonlySet<string>;
  /** Resolver for host names, all addresses; defaults to the system resolver (dns.lookup). */
  readonly resolve?: (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly maxRedirects?: number;
}

export interface FetchRequest {
  readonly method?: 'GET' | 'POST';
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

export interface FetchedResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  readonly finalUrl: string;
}

class Refused extends Error {
  constructor(readonly kind: RefusalKind, readonly target: string) {
    super(`destination ${target} is not allowed (${kind})`);
  }
}

const defaultResolve = (hostname: string): Promise<ReadonlyArray<{ address: string; family: number }>> =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

export function hostKey(url: URL): string {
  const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
  return `${url.hostname}:${port}`;
}

/** Follows redirects for GET; a POST (webhook) never follows one. Fails with MEDIA_FETCH_FAILED reasons. */
export async function guardedFetch(input: string, options: GuardOptions, request: FetchRequest = {}): Promise<FetchedResponse> {
  const maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
  let url = new URL(input);
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw ApiError.media('DESTINATION_NOT_ALLOWED', `scheme ${url.protocol} is not allowed`, { url: url.href });
    }
    const response = await fetchOnce(url, options, request);
    const location = response.headers.location;
    const redirect = response.status >= 300 && response.status < 400 && location !== undefined && (request.method ?? 'GET') === 'GET';
    if (!redirect) return { ...response, finalUrl: url.href };
    if (hop >= maxRedirects) {
      throw ApiError.media('TOO_MANY_REDIRECTS', `more than ${maxRedirects} redirects`, { sourceStatus: response.status, maxRedirects });
    }
    try {
      url = new URL(location, url);
    } catch {
      throw ApiError.media('SOURCE_REFUSED', 'redirect Location is not a valid URL', { sourceStatus: response.status });
    }
  }
}

function fetchOnce(url: URL, options: GuardOptions, request: FetchRequest): Promise<Omit<FetchedResponse, 'finalUrl'>> {
  const allowed = options.allowHosts.has(hostKey(url));
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowed) {
    const byName = isIpLiteral(hostname) ? refusalForAddress(hostname) : refusalForName(hostname);
    if (byName !== undefined) return Promise.reject(refusedError(new Refused(byName, url.hostname)));
  }
  const resolve = options.resolve ?? defaultResolve;
  const lookup: LookupFunction = (name, lookupOptions, callback) => {
    resolve(name).then(
      (addresses) => {
        const refused = allowed ? undefined : addresses.map((a) => refusalForAddress(a.address)).find((k) => k !== undefined);
        if (refused !== undefined) return callback(new Refused(refused, name) as NodeJS.ErrnoException, '', 0);
        if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${name}`), { code: 'ENOTFOUND' }), '', 0);
        if ((lookupOptions as { all?: boolean }).all === true) {
          (callback as unknown as (e: null, a: ReadonlyArray<{ address: string; family: number }>) => void)(null, addresses);
        } else {
          const first = addresses[0] as { address: string; family: number };
          callback(null, first.address, first.family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolvePromise, reject) => {
    const req = transport.request(
      url,
      { method: request.method ?? 'GET', headers: { 'User-Agent': 'soundclone-reference/0.1', ...request.headers }, lookup, agent: false, timeout: options.timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            req.destroy();
            reject(new ApiError('PAYLOAD_TOO_LARGE', `media is larger than ${options.maxBytes} bytes`, { maxBytes: options.maxBytes, sourceStatus: res.statusCode }));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', (error) => reject(unreachable(error)));
        res.on('close', () => {
          if (!res.complete) reject(unreachable(Object.assign(new Error('response cut short'), { code: 'ECONNRESET' })));
        });
      },
    );
    // `timeout` above is the socket's idle limit; this deadline also bounds a source that trickles bytes.
    const deadline = setTimeout(() => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), options.timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.on('error', (error) => reject(error instanceof Refused ? refusedError(error) : unreachable(error)));
    req.end(request.body);
  });
}

function refusedError(error: Refused): ApiError {
  return ApiError.media('DESTINATION_NOT_ALLOWED', error.message, { refusal: error.kind, host: error.target });
}

function unreachable(error: Error): ApiError {
  const code = (error as NodeJS.ErrnoException).code ?? 'UNKNOWN';
  return ApiError.media('SOURCE_UNREACHABLE', `source could not be reached (${code})`, { cause: code });
}

/** Maps a fetched answer that is not 2xx to its media failure (spec "Errors" 4, details.sourceStatus). */
export function failureForStatus(status: number): ApiError | undefined {
  if (status >= 200 && status < 300) return undefined;
  if (status === 429 || status >= 500) return ApiError.media('SOURCE_UNAVAILABLE', `source answered ${status}`, { sourceStatus: status });
  return ApiError.media('SOURCE_REFUSED', `source answered ${status}`, { sourceStatus: status });
}
