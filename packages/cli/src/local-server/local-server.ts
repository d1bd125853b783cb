import { SoundClone } from '@soundclone/core';
import type { RunningServer } from '@soundclone/server';
import type { Output } from '../output.js';
import { publishAddress, readAddress, removeAddress, type PublishedServer } from './address-file.js';
import { liveBorrowers, registerBorrower, type BorrowerMark } from './borrowers.js';
import { isAlive } from './pid.js';

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
  /** Starts the server over dataDir on `port` (0: any); throws when the directory is locked. */
  readonly start: (port: number) => Promise<RunningServer>;
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
    const borrowed = await borrow(options);
    if (borrowed !== undefined) return borrowed;
    let running: RunningServer;
    try {
      running = await options.start(0);
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
      publishHeld(dataDir, running);
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
async function borrow(options: KeptServerOptions): Promise<KeptServer | undefined> {
  const { dataDir, key } = options;
  if (readAddress(dataDir) === undefined) return undefined;
  const mark = registerBorrower(dataDir);
  const address = readAddress(dataDir);
  if (address === undefined || !(await answers(address.url, key))) {
    mark.release();
    return undefined;
  }
  return new Borrowed(options, address, mark);
}

/**
 * Another command's server, in use. Its holder waits for us when it stops normally; killed (SIGKILL, or
 * told twice to stop while we use it), it leaves a dead pid, and this command takes over: it starts the
 * server itself over the directory on the same port, so requests in flight and the session's reconnect
 * reach a server again at the same URL, with the same state (a live session's own audio was in the
 * dead process, so that session ends with the server's answer that it does not know it). One taker
 * wins the lock; the others borrow from it.
 */
class Borrowed implements KeptServer {
  readonly url: string;
  #lender: PublishedServer;
  #running: RunningServer | undefined;
  #mark: BorrowerMark | undefined;
  readonly #timer: NodeJS.Timeout;
  #takingOver: Promise<void> | undefined;

  constructor(
    private readonly options: KeptServerOptions,
    lender: PublishedServer,
    mark: BorrowerMark,
  ) {
    this.url = lender.url;
    this.#lender = lender;
    this.#mark = mark;
    this.#timer = setInterval(() => {
      if (this.#takingOver === undefined && this.#running === undefined && !isAlive(this.#lender.pid)) this.#takingOver = this.#takeOver().finally(() => (this.#takingOver = undefined));
    }, options.pollMs ?? 250);
    this.#timer.unref();
  }

  get borrowed(): PublishedServer {
    return this.#lender;
  }

  get running(): RunningServer | undefined {
    return this.#running;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#takingOver;
    this.#mark?.release();
    const running = this.#running;
    if (running !== undefined) await stopHeld(this.options.dataDir, running, this.options.out);
  }

  async #takeOver(): Promise<void> {
    const { dataDir, out } = this.options;
    const port = Number(new URL(this.url).port);
    try {
      const running = await this.options.start(port);
      publishHeld(dataDir, running);
      this.#running = running;
      this.#mark?.release();
      this.#mark = undefined;
      out.note(`the local reference server of process ${String(this.#lender.pid)} stopped while this command used it; this command now runs it at ${running.url}`);
      const interrupted = running.state?.interruptedTasks ?? 0;
      if (interrupted > 0) out.note(`${String(interrupted)} transcription(s) were running in it; they are FAILED, nothing charged`);
      return;
    } catch (error) {
      if (this.options.lockedBy(error) === undefined) {
        out.note(`the local reference server of process ${String(this.#lender.pid)} stopped while this command used it, and this command could not start it again at ${this.url}: ${error instanceof Error ? error.message : String(error)}`);
        clearInterval(this.#timer);
        return;
      }
    }
    // Another borrower took over first: borrow from it when it is at the same address.
    const next = readAddress(dataDir);
    if (next !== undefined && next.url === this.url) this.#lender = next;
  }
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
