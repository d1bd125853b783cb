import { API_PREFIX, REALTIME_PATHS, SOCKET_QUERY } from '../../protocol.js';

/** ws(s) URL of the socket endpoint for an http(s) base URL. */
export function socketUrlFor(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/^http/, 'ws') + API_PREFIX + REALTIME_PATHS.socket;
}

/**
 * Where and how a socket authenticates (docs/protocol.md "URL and authentication"): the accessKey header
 * where the platform can send headers (Node), else the creation's token in the query, so the API key
 * never reaches a browser page.
 */
export function socketAddress(
  target: { readonly socketUrl: string; readonly sessionId: string; readonly accessKey?: string | undefined; readonly token?: string | undefined },
  headersSupported: boolean,
): { url: string; headers: Record<string, string> | undefined } {
  const query = new URLSearchParams();
  query.set(SOCKET_QUERY.sessionId, target.sessionId);
  const headerAuth = target.accessKey !== undefined && headersSupported;
  if (!headerAuth && target.token !== undefined) query.set(SOCKET_QUERY.token, target.token);
  return { url: `${target.socketUrl}?${query.toString()}`, headers: headerAuth ? { accessKey: target.accessKey as string } : undefined };
}
