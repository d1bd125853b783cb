import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from './pid.js';

/**
 * `DIR/server.json`: where the reference server that holds the data directory listens, so a second
 * command on the same directory uses it instead of waiting for the directory's lock.
 *
 *   {"url":"http://127.0.0.1:PORT","pid":1234,"recognizer":"pocketsphinx-en-us"}
 *
 * Written to a private temp name and renamed into place, so a reader sees a whole file or none (and a
 * stale file of a killed process is replaced at once). Removed by its writer when the server stops.
 * Only a loopback http URL is ever read back: the local access key is sent to it, so a file pointing
 * anywhere else is ignored like a damaged one.
 */
export const ADDRESS_FILE = 'server.json';

export interface PublishedServer {
  readonly url: string;
  readonly pid: number;
  readonly recognizer: string;
}

const LOOPBACK_URL = /^http:\/\/127\.0\.0\.1:[0-9]{1,5}$/;

export function publishAddress(dir: string, server: PublishedServer): void {
  if (!LOOPBACK_URL.test(server.url)) throw new TypeError(`only a 127.0.0.1 address is published (got ${server.url})`);
  const temp = join(dir, `${ADDRESS_FILE}.${String(server.pid)}.${randomBytes(4).toString('hex')}`);
  writeFileSync(temp, `${JSON.stringify({ url: server.url, pid: server.pid, recognizer: server.recognizer })}\n`, { mode: 0o600 });
  renameSync(temp, join(dir, ADDRESS_FILE));
}

/** What the file says, when it names a loopback server of a live process; undefined otherwise (none, damaged, stale). */
export function readAddress(dir: string): PublishedServer | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, ADDRESS_FILE), 'utf8');
  } catch {
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { url, pid, recognizer } = parsed as Record<string, unknown>;
  if (typeof url !== 'string' || !LOOPBACK_URL.test(url)) return undefined;
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || !isAlive(pid)) return undefined;
  return { url, pid, recognizer: typeof recognizer === 'string' ? recognizer : 'unknown' };
}

/** Removes the file when it is still this process's (a newer holder's file stays). */
export function removeAddress(dir: string, pid = process.pid): void {
  const path = join(dir, ADDRESS_FILE);
  try {
    const { pid: holder } = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown };
    if (holder === pid) unlinkSync(path);
  } catch {
    // Gone or not ours to judge: nothing to remove.
  }
}
