/**
 * The address clients reach the service at when that is not the node's own listen address (a load
 * balancer or proxy in front of one or several nodes): everything the service hands out that names
 * itself (the realtime socket URL of a session creation and of a socket-token refresh) is built on it.
 *
 * Accepted: an absolute http: or https: URL, without credentials, query or fragment; a path is kept
 * (a balancer that routes a prefix to the service) and trailing slashes are dropped. Returns the
 * normalized base, like RunningServer.url: `https://speech.example.com`, `http://10.0.0.5:8080/stt`.
 * Anything else is a TypeError naming what is wrong (`name`: the option checked; internalUrl, where the
 * other nodes reach this one, is checked the same way).
 */
export function normalizePublicUrl(value: unknown, name = 'publicUrl'): string {
  if (typeof value !== 'string' || value.trim() === '') throw new TypeError(`${name} must be an absolute http(s) URL, got ${describe(value)}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`${name} must be an absolute http(s) URL such as https://speech.example.com, got ${describe(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`${name} must use http: or https: (socket URLs become ws: or wss:), got ${url.protocol} in ${describe(value)}`);
  if (url.username !== '' || url.password !== '') throw new TypeError(`${name} must not carry credentials, got ${describe(value)}`);
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#')) throw new TypeError(`${name} must not have a query or fragment, got ${describe(value)}`);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
