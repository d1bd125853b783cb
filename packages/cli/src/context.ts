import { randomBytes } from 'node:crypto';
import { SoundClone } from '@soundclone/core';
import type { RunningServer } from '@soundclone/server';
import { localAccessKey, localDataDir } from './local-state.js';
import { CliUsageError } from './cli-error.js';
import type { GlobalFlags } from './args.js';
import type { Output } from './output.js';

export interface Env {
  readonly SOUNDCLONE_ACCESS_KEY?: string | undefined;
  readonly SOUNDCLONE_BASE_URL?: string | undefined;
  readonly SOUNDCLONE_DATA_DIR?: string | undefined;
  readonly XDG_DATA_HOME?: string | undefined;
  readonly HOME?: string | undefined;
}

/** A client, and the in-process reference server behind it when the CLI started one. */
export interface Connection {
  readonly client: SoundClone;
  readonly baseUrl: string;
  readonly local: boolean;
  /** A local server that keeps its state in a data directory (not --ephemeral). */
  readonly keepsState: boolean;
  close(): Promise<void>;
}

/**
 * How long a command waits for another soundclone process to let go of the data directory (a
 * `captions` run holds it while it captures) before it gives up with STATE_LOCKED.
 */
export const LOCK_WAIT_MS = 5000;
const LOCK_POLL_MS = 100;

/**
 * Flags win over the environment. With neither a base URL nor a key anywhere, the CLI runs the
 * reference server in-process (so the first command works offline) and says so on stderr. That server
 * keeps its state in the local data directory (local-state.ts) with a key kept there, so what one
 * command creates the next one sees; --ephemeral keeps nothing. It recognizes real speech with
 * PocketSphinx when it is installed (`--recognizer auto`, the default).
 */
export async function connect(flags: GlobalFlags, env: Env, out: Output): Promise<Connection> {
  const baseUrl = flags.baseUrl ?? nonEmpty(env.SOUNDCLONE_BASE_URL);
  const accessKey = flags.accessKey ?? nonEmpty(env.SOUNDCLONE_ACCESS_KEY);
  if (baseUrl !== undefined && accessKey !== undefined) {
    return { client: new SoundClone({ accessKey, baseUrl }), baseUrl, local: false, keepsState: false, close: async () => undefined };
  }
  if (baseUrl !== undefined) throw new CliUsageError('an access key is needed for --base-url: give --access-key or set SOUNDCLONE_ACCESS_KEY');
  if (accessKey !== undefined) throw new CliUsageError('a base URL is needed with an access key: give --base-url or set SOUNDCLONE_BASE_URL');
  const { server, key } = flags.ephemeral ? await startEphemeral(flags) : await startKept(flags, env, out);
  out.note(`no --base-url and no SOUNDCLONE_ACCESS_KEY: started the local reference server at ${server.url}`);
  out.note(server.recognizer.notice ?? `speech recognition: ${server.recognizer.id}`);
  const state = server.state;
  if (state === undefined) {
    out.note('--ephemeral: the local reference server keeps nothing after this command exits');
  } else {
    out.note(`local state is kept in ${state.dataDir} (set SOUNDCLONE_DATA_DIR to move it, --ephemeral to keep nothing)`);
    if (state.dropped !== undefined) out.note(`${state.journal}: line ${state.dropped.line} was cut short by an earlier crash and was dropped (${state.dropped.bytes} bytes)`);
    if (state.interruptedTasks > 0) out.note(`${state.interruptedTasks} transcription(s) were running when an earlier command stopped; they are FAILED, nothing charged`);
  }
  return { client: new SoundClone({ accessKey: key, baseUrl: server.url }), baseUrl: server.url, local: true, keepsState: state !== undefined, close: () => server.close() };
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

/** Another soundclone process holding the directory is waited for, up to LOCK_WAIT_MS, then refused. */
async function startKept(flags: GlobalFlags, env: Env, out: Output): Promise<LocalServer> {
  const { startServer, isStateStoreError } = await import('@soundclone/server');
  const dataDir = localDataDir(env);
  const key = localAccessKey(dataDir);
  const deadline = Date.now() + LOCK_WAIT_MS;
  let waiting = false;
  for (;;) {
    try {
      return { server: await startServer({ port: 0, host: '127.0.0.1', accessKeys: [key], recognizer: flags.recognizer, dataDir }), key };
    } catch (error) {
      if (!isStateStoreError(error) || error.code !== 'STATE_LOCKED' || Date.now() >= deadline) {
        if (isStateStoreError(error) && error.code === 'STATE_LOCKED') {
          out.note(`another soundclone command (process ${String(error.details.pid ?? '?')}) is using ${dataDir}; run with --ephemeral, or set SOUNDCLONE_DATA_DIR to another directory`);
        }
        throw error;
      }
      if (!waiting) out.note(`waiting for another soundclone command (process ${String(error.details.pid ?? '?')}) to finish with ${dataDir}`);
      waiting = true;
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    }
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
