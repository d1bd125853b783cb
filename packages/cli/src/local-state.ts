import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { Env } from './context.js';

/**
 * Where the in-process reference server keeps its state between commands, and the local access key
 * kept beside it (the key names the account, so it must be the same every run).
 *
 *   SOUNDCLONE_DATA_DIR                 when set and not empty
 *   $XDG_DATA_HOME/soundclone           when XDG_DATA_HOME is an absolute path (the XDG spec ignores others)
 *   ~/.local/share/soundclone           otherwise (HOME, else the user database's home)
 */
export function localDataDir(env: Env): string {
  const explicit = env.SOUNDCLONE_DATA_DIR;
  if (explicit !== undefined && explicit.trim() !== '') return resolve(explicit);
  const xdg = env.XDG_DATA_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'soundclone');
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
  return join(home, '.local', 'share', 'soundclone');
}

/**
 * The local access key in `DIR/access-key` (mode 0600), made on first use. Created with `wx`, so two
 * first commands at once agree on one key (the loser reads the winner's).
 */
export function localAccessKey(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, 'access-key');
  try {
    writeFileSync(path, `local-${randomBytes(12).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = readFileSync(path, 'utf8').trim();
  if (!/^[\x21-\x7e]+$/.test(key)) throw new Error(`${path} does not hold an access key (visible ASCII on one line); remove it to make a new one`);
  return key;
}
