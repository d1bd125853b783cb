import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliUsageError } from './cli-error.js';

/** Flags every subcommand takes. */
export const GLOBAL_OPTIONS = {
  'base-url': { type: 'string' },
  'access-key': { type: 'string' },
  recognizer: { type: 'string' },
  ephemeral: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  debug: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

export interface GlobalFlags {
  readonly baseUrl: string | undefined;
  readonly accessKey: string | undefined;
  /** For a local reference server only: which speech recognizer it runs. */
  readonly recognizer: LocalRecognizer;
  /** For a local reference server only: keep nothing (no data directory). */
  readonly ephemeral: boolean;
  readonly json: boolean;
  readonly debug: boolean;
  readonly help: boolean;
}

/** The reference server's recognizer choices (its RECOGNIZER_CHOICES; the server package loads lazily). */
export const LOCAL_RECOGNIZERS = ['auto', 'pocketsphinx', 'deterministic'] as const;
export type LocalRecognizer = (typeof LOCAL_RECOGNIZERS)[number];

export interface Parsed<V> {
  readonly values: V & GlobalFlags;
  readonly positionals: string[];
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * node:util parseArgs with the global flags added and its errors turned into one-line usage errors.
 * `--mic` may stand alone (the default device) or take a device: a bare `--mic` becomes `--mic=`.
 */
export function parse<O extends Options>(args: readonly string[], options: O): Parsed<Record<string, string | boolean | string[] | undefined>> {
  const normalized = args.map((arg, i) => (arg === '--mic' && (args[i + 1] === undefined || args[i + 1]?.startsWith('-') === true) ? '--mic=' : arg));
  let result;
  try {
    result = parseArgs({ args: normalized, options: { ...GLOBAL_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (caught) {
    throw new CliUsageError(caught instanceof Error ? usageMessage(caught.message) : String(caught));
  }
  const v = result.values as Record<string, string | boolean | string[] | undefined>;
  return {
    values: {
      ...v,
      baseUrl: v['base-url'] as string | undefined,
      accessKey: v['access-key'] as string | undefined,
      recognizer: oneOf(v, 'recognizer', LOCAL_RECOGNIZERS) ?? 'auto',
      ephemeral: v['ephemeral'] === true,
      json: v['json'] === true,
      debug: v['debug'] === true,
      help: v['help'] === true,
    },
    positionals: result.positionals,
  };
}

/**
 * parseArgs' wording, made into one line a user can act on. A value that starts with a dash
 * (`--limit -1`) is "ambiguous" to parseArgs: say which flag and how to write such a value.
 */
function usageMessage(message: string): string {
  const ambiguous = /^Option '(-[^' ]+)' argument is ambiguous/.exec(message);
  if (ambiguous !== null) return `${ambiguous[1] as string} needs a value; write a value that starts with "-" as ${ambiguous[1] as string}=VALUE`;
  return (message.replace(/\. To specify a positional.*$/s, '').split('\n')[0] ?? message).trim();
}

export function str(values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function positiveInt(values: Record<string, unknown>, name: string): number | undefined {
  const raw = str(values, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new CliUsageError(`--${name} takes a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

export function oneOf<T extends string>(values: Record<string, unknown>, name: string, allowed: readonly T[]): T | undefined {
  const raw = str(values, name);
  if (raw === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(raw)) throw new CliUsageError(`--${name} takes one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as T;
}
