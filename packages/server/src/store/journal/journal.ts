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
  /** Bytes of whole lines in the file: where a failed append is cut back to. */
  private size: number;
  /** Set when a failed append could not be cut back: appending after a partial line would corrupt the file. */
  private broken: StateStoreError | undefined;

  private constructor(
    readonly file: string,
    fd: number,
    size: number,
  ) {
    this.fd = fd;
    this.size = size;
  }

  /**
   * Opens (creating when missing) and reads the file. `check` throws (any Error, its message is kept)
   * for a value that is not a valid record.
   */
  static open(file: string, check: (value: unknown, line: number) => void): { journal: Journal; loaded: LoadedJournal } {
    rmSync(`${file}.tmp`, { force: true });
    const fd = openSync(file, 'a+', 0o600);
    try {
      const { size, ...loaded } = readAndRepair(file, fd, check);
      return { journal: new Journal(file, fd, size), loaded };
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /**
   * One line, written and fsync'd. A failed write (disk full) is cut back off the file so the next
   * append starts on a line boundary; when even that fails, every later append refuses too.
   */
  append(value: unknown): void {
    if (this.broken !== undefined) throw this.broken;
    const line = Buffer.from(`${JSON.stringify(value)}\n`, 'utf8');
    try {
      writeAllAndSync(this.fd, line, this.file);
      this.size += line.length;
    } catch (error) {
      try {
        ftruncateSync(this.fd, this.size);
      } catch {
        this.broken = error as StateStoreError;
      }
      throw error;
    }
  }

  /** Replaces the whole file with `values` (compaction), crash-safe as described above. */
  rewrite(values: readonly unknown[]): void {
    const temp = `${this.file}.tmp`;
    let data: Buffer;
    const tempFd = openSync(temp, 'w', 0o600);
    try {
      data = Buffer.from(values.map((v) => `${JSON.stringify(v)}\n`).join(''), 'utf8');
      writeAllAndSync(tempFd, data, temp);
    } finally {
      closeSync(tempFd);
    }
    renameSync(temp, this.file);
    syncDirectory(dirname(this.file));
    // The old descriptor names the replaced inode: appends must go to the new file.
    closeSync(this.fd);
    this.fd = openSync(this.file, 'a', 0o600);
    this.size = data.length;
  }

  close(): void {
    closeSync(this.fd);
  }
}

function readAndRepair(file: string, fd: number, check: (value: unknown, line: number) => void): LoadedJournal & { size: number } {
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
  return dropped === undefined ? { values, size: goodEnd } : { values, dropped, size: goodEnd };
}

function writeAllAndSync(fd: number, data: Buffer, file: string): void {
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
