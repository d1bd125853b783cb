import { ValidationError } from '../errors/client-errors.js';
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
    refuseDotSegment(name, value);
    return encodeSegment(value);
  });
}

/**
 * `.` and `..` cannot be one segment at all: the WHATWG URL parser treats `%2E` and `%2E%2E` exactly as
 * the dots and collapses them (`…/sessions/%2E%2E/finish` is sent as `…/sessions/finish`), so no
 * encoding keeps them. No id is a dot, so they are refused as input.
 */
function refuseDotSegment(field: string, value: string): void {
  if (value === '.' || value === '..') throw new ValidationError([{ field, rule: 'must not be "." or ".." (it would address another path)' }]);
}

/** encodeURIComponent plus the characters it leaves alone but a path segment should not carry raw. */
export function encodeSegment(value: string): string {
  if (value === '' || value === '.' || value === '..') {
    // An empty segment would collapse the path: refused. Encoded dots are still dots to a URL parser,
    // so buildPath() and path`` refuse dot segments before they get here.
    if (value === '') throw new TypeError('a path parameter must not be empty');
    return value.replace(/\./g, '%2E');
  }
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Tagged template for ad-hoc paths: path`/stt/transcriptions/${id}` encodes each interpolation. */
export function path(strings: TemplateStringsArray, ...values: readonly string[]): string {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    refuseDotSegment(`path parameter ${i + 1}`, value);
    out += encodeSegment(value) + (strings[i + 1] ?? '');
  });
  return API_PREFIX + out;
}
