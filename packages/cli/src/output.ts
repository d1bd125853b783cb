import type { Writable } from 'node:stream';

/**
 * Everything the CLI prints goes through here: results on stdout (tables, or JSON with --json),
 * notes and status on stderr, so `soundclone ... --json | jq` sees only data.
 */
export class Output {
  readonly tty: boolean;

  constructor(
    readonly stdout: Writable & { isTTY?: boolean; columns?: number },
    readonly stderr: Writable & { isTTY?: boolean },
    readonly json: boolean,
  ) {
    this.tty = stdout.isTTY === true;
  }

  /** The terminal's width; 80 when it is unknown or reported as 0 (some terminals and pseudo-terminals do). */
  get columns(): number {
    const columns = this.stdout.columns;
    return columns !== undefined && Number.isFinite(columns) && columns > 0 ? columns : 80;
  }

  /** A line for people, on stderr ("soundclone: ..."). */
  note(text: string): void {
    this.stderr.write(`soundclone: ${text}\n`);
  }

  print(text: string): void {
    this.stdout.write(`${text}\n`);
  }

  /** One JSON document per call (bigints as decimal strings, the contract form). */
  data(value: unknown): void {
    this.stdout.write(`${toJson(value)}\n`);
  }

  /** Rows as an aligned table, or as a JSON array with --json. */
  table<T>(rows: readonly T[], columns: ReadonlyArray<readonly [string, (row: T) => unknown]>, raw: unknown = rows): void {
    if (this.json) return this.data(raw);
    if (rows.length === 0) return this.print('(none)');
    const cells = [columns.map(([title]) => title), ...rows.map((row) => columns.map(([, get]) => cell(get(row))))];
    const widths = columns.map((_, c) => Math.max(...cells.map((r) => (r[c] as string).length)));
    for (const r of cells) this.print(r.map((value, c) => (c === r.length - 1 ? value : value.padEnd(widths[c] as number))).join('  ').trimEnd());
  }

  /** Key/value pairs, one per line, or one JSON object. */
  fields(pairs: ReadonlyArray<readonly [string, unknown]>, raw: unknown): void {
    if (this.json) return this.data(raw);
    const width = Math.max(...pairs.map(([k]) => k.length));
    for (const [key, value] of pairs) this.print(`${key.padEnd(width)}  ${cell(value)}`);
  }
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return toJson(value);
}

export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}
