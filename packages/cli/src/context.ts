import { randomBytes } from 'node:crypto';
import { SoundClone } from '@soundclone/core';
import type { RunningServer } from '@soundclone/server';
import { localAccessKey, localDataDir } from './local-state.js';
import { CliUsageError } from './cli-error.js';
import type { GlobalFlags } from './args.js';
import type { Output } from './output.js';
import { openKeptServer, type KeptServer } from './local-server/local-server.js';

export interface Env {
  readonly SOUNDCLONE_ACCESS_KEY?: string | undefined;
  readonly SOUNDCLONE_BASE_URL?: string | undefined;
  readonly SOUNDCLONE_DATA_DIR?: string | undefined;
  readonly XDG_DATA_HOME?: string | undefined;
  readonly HOME?: string | undefined;
}

/** A client, and the local reference server behind it (this command's own, or another command's). */
export interface Connection {
  readonly client: SoundClone;
  readonly baseUrl: string;
  readonly local: boolean;
  /** A local server that keeps its state in a data directory (not --ephemeral). */
  readonly keepsState: boolean;
  close(): Promise<void>;
}

/**
 * How long a command waits for another soundclone process that holds the data directory either to let
 * go of it or to publish its server's address (one that is starting does so within a second or two),
 * before it gives up with STATE_LOCKED.
 */
export const LOCK_WAIT_MS = 5000;

/**
 * Flags win over the environment. With neither a base URL nor a key anywhere, the CLI runs the
 * reference server in-process (so the first command works offline) and says so on stderr. That server
 * keeps its state in the local data directory (local-state.ts) with a key kept there, so what one
 * command creates the next one sees; --ephemeral keeps nothing. A command run while another one's
 * server holds the directory uses that server (local-server/). It recognizes real speech with
 * PocketSphinx when it is installed (`--recognizer auto`, the default).
 */
export async function connect(flags: GlobalFlags, env: Env, out: Output): Promise<Connection> {
  const pending = await openConnection(flags, env, out);
  for (const line of pending.notes) out.note(line);
  return pending.connection;
}

/** A connection and the notes that say what it is, not yet printed (see openConnection). */
export interface PendingConnection {
  readonly connection: Connection;
  readonly notes: readonly string[];
}

/**
 * connect() without printing its notes yet: a command that must know the local server is ready before
 * it opens something that cannot wait (a microphone) opens this first, and prints the notes once that
 * opened, so a failure to open it stays the one line on stderr. Waiting for a locked directory and the
 * holder's goodbye still go to `out` as they happen.
 */
export async function openConnection(flags: GlobalFlags, env: Env, out: Output): Promise<PendingConnection> {
  const baseUrl = flags.baseUrl ?? nonEmpty(env.SOUNDCLONE_BASE_URL);
  const accessKey = flags.accessKey ?? nonEmpty(env.SOUNDCLONE_ACCESS_KEY);
  if (baseUrl !== undefined && accessKey !== undefined) {
    return { connection: { client: new SoundClone({ accessKey, baseUrl }), baseUrl, local: false, keepsState: false, close: async () => undefined }, notes: [] };
  }
  if (baseUrl !== undefined) throw new CliUsageError('an access key is needed for --base-url: give --access-key or set SOUNDCLONE_ACCESS_KEY');
  if (accessKey !== undefined) throw new CliUsageError('a base URL is needed with an access key: give --base-url or set SOUNDCLONE_BASE_URL');
  if (flags.ephemeral) {
    const { server, key } = await startEphemeral(flags);
    const notes = [
      `no --base-url and no SOUNDCLONE_ACCESS_KEY: started the local reference server at ${server.url}`,
      server.recognizer.notice ?? `speech recognition: ${server.recognizer.id}`,
      '--ephemeral: the local reference server keeps nothing after this command exits',
    ];
    return { connection: { client: new SoundClone({ accessKey: key, baseUrl: server.url }), baseUrl: server.url, local: true, keepsState: false, close: () => server.close() }, notes };
  }
  const dataDir = localDataDir(env);
  const key = localAccessKey(dataDir);
  const kept = await openKept(flags, dataDir, key, out);
  const notes: string[] = [];
  const server = kept.running;
  if (server !== undefined) {
    notes.push(`no --base-url and no SOUNDCLONE_ACCESS_KEY: started the local reference server at ${server.url}`);
    notes.push(server.recognizer.notice ?? `speech recognition: ${server.recognizer.id}`);
  } else if (kept.borrowed !== undefined) {
    notes.push(`no --base-url and no SOUNDCLONE_ACCESS_KEY: using the local reference server of another soundclone command (process ${String(kept.borrowed.pid)}) at ${kept.url}`);
    notes.push(`speech recognition: ${kept.borrowed.recognizer} (that server's)`);
  }
  notes.push(`local state is kept in ${dataDir} (set SOUNDCLONE_DATA_DIR to move it, --ephemeral to keep nothing)`);
  const state = server?.state;
  if (state !== undefined) {
    if (state.dropped !== undefined) notes.push(`${state.journal}: line ${state.dropped.line} was cut short by an earlier crash and was dropped (${state.dropped.bytes} bytes)`);
    if (state.interruptedTasks > 0) notes.push(`${state.interruptedTasks} transcription(s) were running when an earlier command stopped; they are FAILED, nothing charged`);
  }
  return { connection: { client: new SoundClone({ accessKey: key, baseUrl: kept.url }), baseUrl: kept.url, local: true, keepsState: true, close: () => kept.close() }, notes };
}

interface LocalServer {
  readonly server: RunningServer;
  readonly key: string;
}

async function startEphemeral(flags: GlobalFlags): Promise<LocalServer> {
  const { startServer } = await import('@soundclone/server');
  const key = `local-${randomBytes(8).toString('hex')}`;
  return { server: await startServer({ port: 0, host: '127.0.0.1', accessKeys: [key], recognizer: flags.recognizer }), key };
}

/**
 * The server kept over the data directory: another command's when one publishes a live one, else this
 * command's own (local-server/local-server.ts). A directory held by a process that publishes nothing is
 * waited for, up to LOCK_WAIT_MS, then refused.
 */
async function openKept(flags: GlobalFlags, dataDir: string, key: string, out: Output): Promise<KeptServer> {
  // Loaded only to start a server: a command that uses another one's does without it (a second or so).
  let server: typeof import('@soundclone/server') | undefined;
  return openKeptServer({
    dataDir,
    key,
    out,
    lockWaitMs: LOCK_WAIT_MS,
    start: async (port) => {
      server ??= await import('@soundclone/server');
      return server.startServer({ port, host: '127.0.0.1', accessKeys: [key], recognizer: flags.recognizer, dataDir });
    },
    lockedBy: (error) => (server?.isStateStoreError(error) === true && error.code === 'STATE_LOCKED' ? (error.details.pid ?? null) : undefined),
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
