import { ResponseFormatError } from '../errors/client-errors.js';

/**
 * Field readers for response parsing. Each takes the value and its path (`data.billing.state`) and
 * either returns the typed value or throws ResponseFormatError MALFORMED_RESPONSE naming the path, so a
 * service that changed shape fails loudly at the boundary instead of deep in user code.
 */
export type Json = Record<string, unknown>;

export function object(value: unknown, path: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw ResponseFormatError.malformed(path, 'an object', value);
  return value as Json;
}

export function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw ResponseFormatError.malformed(path, 'an array', value);
  return value;
}

export function string(value: unknown, path: string): string {
  if (typeof value !== 'string') throw ResponseFormatError.malformed(path, 'a string', value);
  return value;
}

export function nullableString(value: unknown, path: string): string | null {
  return value === null || value === undefined ? null : string(value, path);
}

export function number(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw ResponseFormatError.malformed(path, 'a number', value);
  return value;
}

export function boolean(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') throw ResponseFormatError.malformed(path, 'a boolean', value);
  return value;
}

export function stringArray(value: unknown, path: string): string[] {
  return array(value, path).map((item, i) => string(item, `${path}[${i}]`));
}

/** Maps an array field with a per-item parser that receives the item's path. */
export function list<T>(value: unknown, path: string, item: (value: unknown, path: string) => T): T[] {
  return array(value, path).map((v, i) => item(v, `${path}[${i}]`));
}
