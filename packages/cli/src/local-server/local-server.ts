import { SoundClone } from '@soundclone/core';
import type { RunningServer } from '@soundclone/server';
import type { Output } from '../output.js';
import { publishAddress, readAddress, removeAddress, type PublishedServer } from './address-file.js';
import { liveBorrowers, registerBorrower } from './borrowers.js';

/**
 * The reference server kept over one data directory, shared by every command on it. Whoever takes the
 * directory's lock starts the server and publishes its address; any other command uses that server.
 *
 *   address file names a live server that answers our key  -> borrow it (registered as a borrower)
 *   else start one: it takes the lock                      -> publish the address, hold it
 *   else the lock is held (another command is starting,    -> poll both every pollMs, up to lockWaitMs,
 *        or a server that publishes nothing holds it)          then the STATE_LOCKED error as thrown
 *
 * The holder stops its server only when no live borrower is left (stopHeld): its own work and output
 * end as usual, then it says whom it waits for. The address goes first, so nobody new arrives meanwhile.
 */
export interface KeptServer {
  readonly url: string;
  /** This command's own server, when it started one (it holds the directory). */
  readonly running?: RunningServer;
  /** The server of another command, when this one borrowed it. */
  readonly borrowed?: PublishedServer;
  close(): Promise<void>;
}

export interface KeptServerOptions {
  readonly dataDir: string;
  readonly key: string;
  /** Starts the server over dataDir; throws when the directory is locked. */
  readonly start: () => Promise<RunningServer>;
  /** The holder's pid when `error` says the directory is locked (its pid may be unknown: null); undefined for any other error. */
  readonly lockedBy: (error: unknown) => number | null | undefined;
  readonly out: Output;
  readonly lockWaitMs: number;
  readonly pollMs?: number;
}

export async function openKeptServer(options: KeptServerOptions): Promise<KeptServer> {
  const { dataDir, key, out } = options;
  const deadline = Date.now() + options.lockWaitMs;
  let waiting = false;
  for (;;) {
    const borrowed = await borrow(dataDir, key);
    if (borrowed !== undefined) return borrowed;
    let running: RunningServer;
    try {
      running = await options.start();
    } catch (error) {
      const holder = options.lockedBy(error);
      if (holder === undefined) throw error;
      if (Date.now() >= deadline) {
        out.note(`another soundclone command (process ${String(holder ?? '?')}) is using ${dataDir} and publishes no server address; run with --ephemeral, or set SOUNDCLONE_DATA_DIR to another directory`);
        throw error;
      }
      if (!waiting) out.note(`waiting for another soundclone command (process ${String(holder ?? '?')}) to finish with ${dataDir}, or to publish its server`);
      waiting = true;
      await sleep(options.pollMs ?? 100);
      continue;
    }
    try {
      publishAddress(dataDir, { url: running.url, pid: process.pid, recognizer: running.recognizer.id });
    } catch (error) {
      await running.close();
      throw error;
    }
    return { url: running.url, running, close: () => stopHeld(dataDir, running, out) };
  }
}

/**
 * Registers as a borrower, then reads the address (see borrowers.ts for why in that order) and asks
 * the server who we are with the local key: a live pid is not enough (pids are reused), an answer to
 * the key of this directory is.
 */
async function borrow(dataDir: string, key: string): Promise<KeptServer | undefined> {
  if (readAddress(dataDir) === undefined) return undefined;
  const mark = registerBorrower(dataDir);
  const address = readAddress(dataDir);
  if (address === undefined || !(await answers(address.url, key))) {
    mark.release();
    return undefined;
  }
  return { url: address.url, borrowed: address, close: async () => mark.release() };
}

async function answers(url: string, key: string): Promise<boolean> {
  try {
    await new SoundClone({ accessKey: key, baseUrl: url, maxRetries: 0, timeoutMs: 3000 }).user.info();
    return true;
  } catch {
    return false;
  }
}

/** Publishes a server this process started over dataDir (the `server` command's, too). */
export function publishHeld(dataDir: string, running: RunningServer): void {
  publishAddress(dataDir, { url: running.url, pid: process.pid, recognizer: running.recognizer.id });
}

/**
 * Stops a server this process holds: the address goes first, then it waits while other commands still
 * use the server (saying so once, and again when the count changes); Ctrl-C or SIGTERM stops it at once.
 */
export async function stopHeld(dataDir: string, running: RunningServer, out: Output, pollMs = 200): Promise<void> {
  removeAddress(dataDir);
  let borrowers = liveBorrowers(dataDir);
  if (borrowers.length > 0) {
    let interrupted = false;
    const onSignal = (): void => void (interrupted = true);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      let said = '';
      while (borrowers.length > 0 && !interrupted) {
        const line = `keeping the local reference server at ${running.url} until ${borrowers.length === 1 ? 'another soundclone command' : `${String(borrowers.length)} other soundclone commands`} (process ${borrowers.join(', ')}) finish${borrowers.length === 1 ? 'es' : ''} with it; Ctrl-C stops it now`;
        if (line !== said) out.note(line);
        said = line;
        await sleep(pollMs);
        borrowers = liveBorrowers(dataDir);
      }
      if (interrupted && borrowers.length > 0) out.note(`stopping the local reference server while process ${borrowers.join(', ')} still uses it`);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
  await running.close();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
