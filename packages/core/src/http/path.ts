import { API_PREFIX } from '../protocol.js';

/**
 * Fills a protocol.ts PATHS template, percent-encoding every parameter (style guide "REST": path
 * parameters go through one encoder). An id such as `../user/info` or `a/b?c` stays one segment and
 * can never address another endpoint.
 */
export function buildPath(template: string, params: Readonly<Record<string, string>> = {}): string {
  return API_PREFIX + template.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`missing path parameter ${name}`);
    return encodeSegment(value);
  });
}

/** encodeURIComponent plus the characters it leaves alone but a path segment should not carry raw. */
export function encodeSegment(value: string): string {
  if (value === '' || value === '.' || value === '..') {
    // An empty or dot segment would collapse the path; encode the dots, and refuse empty outright.
    if (value === '') throw new TypeError('a path parameter must not be empty');
    return value.replace(/\./g, '%2E');
  }
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Tagged template for ad-hoc paths: path`/stt/transcriptions/${id}` encodes each interpolation. */
export function path(strings: TemplateStringsArray, ...values: readonly string[]): string {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += encodeSegment(value) + (strings[i + 1] ?? '');
  });
  return API_PREFIX + out;
}
