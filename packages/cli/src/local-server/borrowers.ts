import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from './pid.js';

/**
 * `DIR/borrowers/PID.RANDOM`: one file per command using another command's local server. The server's
 * holder does not stop it while a live borrower is listed; a borrower killed without cleaning up is
 * recognized by its dead pid and its file removed.
 *
 * The order on both sides closes the race between a borrower arriving and the holder stopping:
 *   borrower: register here, THEN read the address file (gone: unregister, start its own server)
 *   holder:   remove the address file, THEN list the borrowers (and wait for them)
 * Either the holder sees the borrower, or the borrower finds no address.
 */
export const BORROWERS_DIR = 'borrowers';

export interface BorrowerMark {
  release(): void;
}

export function registerBorrower(dir: string, pid = process.pid): BorrowerMark {
  const folder = join(dir, BORROWERS_DIR);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const path = join(folder, `${String(pid)}.${randomBytes(4).toString('hex')}`);
  writeFileSync(path, `${String(pid)}\n`, { mode: 0o600 });
  let released = false;
  return {
    release: () => {
      if (released) return;
      released = true;
      try {
        unlinkSync(path);
      } catch {
        // Already removed (a holder cleaned up after a pid it took for dead): nothing to do.
      }
    },
  };
}

/** The pids of live borrowers; the files of dead ones are removed on the way. */
export function liveBorrowers(dir: string): number[] {
  const folder = join(dir, BORROWERS_DIR);
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  const live: number[] = [];
  for (const name of names) {
    const pid = Number(/^([0-9]{1,10})\./.exec(name)?.[1] ?? Number.NaN);
    if (isAlive(pid)) {
      if (!live.includes(pid)) live.push(pid);
      continue;
    }
    try {
      unlinkSync(join(folder, name));
    } catch {
      // Its owner removed it meanwhile.
    }
  }
  return live;
}
