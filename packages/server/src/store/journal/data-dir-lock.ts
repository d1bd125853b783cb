import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StateStoreError } from './state-error.js';

/**
 * One writer per data directory: a `lock` file holding the owner's pid. Node has no flock, so the
 * lock is a file created atomically with its content (written to a private temp name, then hard-linked
 * into place: link fails with EEXIST when a lock exists, and a reader never sees an empty lock).
 *
 *   no lock file                  -> link ours, held
 *   lock of a live pid (or ours)  -> StateStoreError STATE_LOCKED naming the pid
 *   lock of a dead pid, or junk   -> stale: moved aside (rename is atomic, one taker wins), then link ours
 *
 * Two processes taking over the same stale lock at once: the loser's rename moves the winner's fresh
 * lock aside; it reads back what it moved, sees a live pid that is not the stale one, links it back and
 * reports STATE_LOCKED. A pid reused by an unrelated process after a reboot looks alive: the message
 * names the pid and the file so a person can remove it.
 */
export class DataDirLock {
  private constructor(
    readonly path: string,
    private readonly pid: number,
  ) {}

  static acquire(dir: string, pid = process.pid): DataDirLock {
    const path = join(dir, 'lock');
    const temp = join(dir, `lock.${pid}.${randomBytes(4).toString('hex')}`);
    writeFileSync(temp, `${pid}\n`, { mode: 0o600 });
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          linkSync(temp, path);
          return new DataDirLock(path, pid);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
        const holder = readPid(path);
        if (holder === 'gone') continue;
        if (holder !== undefined && isAlive(holder)) throw StateStoreError.locked(dir, holder);
        takeOverStale(dir, path, holder);
      }
      // The lock kept changing hands under us: others are starting on this directory right now.
      throw new StateStoreError('STATE_LOCKED', `${dir}: the lock kept changing hands; another process is starting on this directory`, { file: dir });
    } finally {
      unlinkSync(temp);
    }
  }

  /** Removes the lock if it is still ours (never another process's). */
  release(): void {
    if (readPid(this.path) === this.pid) {
      try {
        unlinkSync(this.path);
      } catch {
        // Already gone: nothing to release.
      }
    }
  }
}

function takeOverStale(dir: string, path: string, stalePid: number | undefined): void {
  const aside = join(dir, `lock.stale.${randomBytes(4).toString('hex')}`);
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // another taker moved it first
    throw error;
  }
  const moved = readPid(aside);
  if (typeof moved === 'number' && moved !== stalePid && isAlive(moved)) {
    // We moved a fresh lock another taker had just linked: put it back and yield to it.
    try {
      linkSync(aside, path);
    } finally {
      unlinkSync(aside);
    }
    throw StateStoreError.locked(dir, moved);
  }
  unlinkSync(aside);
}

/** The pid in a lock file; undefined for junk (a lock we cannot read is stale); 'gone' if there is none. */
function readPid(path: string): number | undefined | 'gone' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
  const pid = /^([0-9]{1,10})\n?$/.exec(text)?.[1];
  return pid === undefined ? undefined : Number(pid);
}

function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
