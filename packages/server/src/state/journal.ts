import { closeSync, fsyncSync, ftruncateSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { StateStoreError } from './state-error.js';

/**
 * An append-only JSONL file: one JSON value per line, each append written and fsync'd before the
 * change it records is answered. Why a journal and not an embedded database: better-sqlite3 is native
 * code (a compiler at install time) and node:sqlite needs Node 22; we support Node 20, and the state is
 * small enough to replay at start.
 *
 * Loading (crash guarantees):
 *   - only newline-terminated lines count: bytes after the last newline are a write cut short and are
 *     dropped;
 *   - a last line that does not parse (or that `check` refuses) is dropped too;
 *   - whatever was dropped is cut off the file (truncate + fsync), so the next append starts clean;
 *   - any other bad line is StateStoreError STATE_CORRUPT naming the file and the 1-based line.
 *
 * Compaction rewrites the whole file: the lines go to `<file>.tmp`, which is fsync'd, renamed over the
 * file (atomic), and the directory fsync'd so the rename itself survives a crash. A crash before the
 * rename leaves the old file whole (the leftover .tmp is removed at the next load).
 */
export interface LoadedJournal {
  /** Parsed values, oldest first, each checked. */
  readonly values: unknown[];
  /** What was cut off the end, when the last write was cut short. */
  readonly dropped?: { readonly line: number; readonly bytes: number };
}

export class Journal {
  private fd: number;

  private constructor(
    readonly file: string,
    fd: number,
  ) {
    this.fd = fd;
  }

  /**
   * Opens (creating when missing) and reads the file. `check` throws (any Error, its message is kept)
   * for a value that is not a valid record.
   */
  static open(file: string, check: (value: unknown, line: number) => void): { journal: Journal; loaded: LoadedJournal } {
    rmSync(`${file}.tmp`, { force: true });
    const fd = openSync(file, 'a+', 0o600);
    try {
      const loaded = readAndRepair(file, fd, check);
      return { journal: new Journal(file, fd), loaded };
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  append(value: unknown): void {
    writeAllAndSync(this.fd, `${JSON.stringify(value)}\n`, this.file);
  }

  /** Replaces the whole file with `values` (compaction), crash-safe as described above. */
  rewrite(values: readonly unknown[]): void {
    const temp = `${this.file}.tmp`;
    const tempFd = openSync(temp, 'w', 0o600);
    try {
      writeAllAndSync(tempFd, values.map((v) => `${JSON.stringify(v)}\n`).join(''), temp);
    } finally {
      closeSync(tempFd);
    }
    renameSync(temp, this.file);
    syncDirectory(dirname(this.file));
    // The old descriptor names the replaced inode: appends must go to the new file.
    closeSync(this.fd);
    this.fd = openSync(this.file, 'a', 0o600);
  }

  close(): void {
    closeSync(this.fd);
  }
}

function readAndRepair(file: string, fd: number, check: (value: unknown, line: number) => void): LoadedJournal {
  const bytes = readFileSync(fd);
  const values: unknown[] = [];
  let start = 0;
  let line = 0;
  let goodEnd = 0;
  let dropped: { line: number; bytes: number } | undefined;
  while (start < bytes.length) {
    line++;
    const newline = bytes.indexOf(0x0a, start);
    if (newline < 0) {
      dropped = { line, bytes: bytes.length - start };
      break;
    }
    const isLast = newline === bytes.length - 1;
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8', start, newline));
      check(value, line);
    } catch (error) {
      if (isLast) {
        dropped = { line, bytes: bytes.length - start };
        break;
      }
      throw StateStoreError.corrupt(file, line, error instanceof SyntaxError ? 'not a JSON line' : (error as Error).message);
    }
    values.push(value);
    start = newline + 1;
    goodEnd = start;
  }
  if (dropped !== undefined) {
    ftruncateSync(fd, goodEnd);
    fsyncSync(fd);
  }
  return dropped === undefined ? { values } : { values, dropped };
}

function writeAllAndSync(fd: number, text: string, file: string): void {
  const data = Buffer.from(text, 'utf8');
  try {
    let offset = 0;
    while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
    fsyncSync(fd);
  } catch (error) {
    throw new StateStoreError('STATE_WRITE_FAILED', `${file}: could not write and sync a change: ${(error as Error).message}`, { file }, { cause: error });
  }
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
