import { randomBytes } from 'node:crypto';
import { SoundClone } from '@soundclone/core';
import { CliUsageError } from './cli-error.js';
import type { GlobalFlags } from './args.js';
import type { Output } from './output.js';

export interface Env {
  readonly SOUNDCLONE_ACCESS_KEY?: string | undefined;
  readonly SOUNDCLONE_BASE_URL?: string | undefined;
}

/** A client, and the in-process reference server behind it when the CLI started one. */
export interface Connection {
  readonly client: SoundClone;
  readonly baseUrl: string;
  readonly local: boolean;
  close(): Promise<void>;
}

/**
 * Flags win over the environment. With neither a base URL nor a key anywhere, the CLI runs the
 * reference server in-process (so the first command works offline) and says so on stderr. That server
 * recognizes real speech with PocketSphinx when it is installed (`--recognizer auto`, the default).
 */
export async function connect(flags: GlobalFlags, env: Env, out: Output): Promise<Connection> {
  const baseUrl = flags.baseUrl ?? nonEmpty(env.SOUNDCLONE_BASE_URL);
  const accessKey = flags.accessKey ?? nonEmpty(env.SOUNDCLONE_ACCESS_KEY);
  if (baseUrl !== undefined && accessKey !== undefined) {
    return { client: new SoundClone({ accessKey, baseUrl }), baseUrl, local: false, close: async () => undefined };
  }
  if (baseUrl !== undefined) throw new CliUsageError('an access key is needed for --base-url: give --access-key or set SOUNDCLONE_ACCESS_KEY');
  if (accessKey !== undefined) throw new CliUsageError('a base URL is needed with an access key: give --base-url or set SOUNDCLONE_BASE_URL');
  const { startServer } = await import('@soundclone/server');
  const key = `local-${randomBytes(8).toString('hex')}`;
  const server = await startServer({ port: 0, host: '127.0.0.1', accessKeys: [key], recognizer: flags.recognizer });
  out.note(`no --base-url and no SOUNDCLONE_ACCESS_KEY: started the local reference server at ${server.url}`);
  out.note(server.recognizer.notice ?? `speech recognition: ${server.recognizer.id}`);
  return { client: new SoundClone({ accessKey: key, baseUrl: server.url }), baseUrl: server.url, local: true, close: () => server.close() };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * For commands that create or list state (voices, transcriptions, history): the in-process server
 * keeps everything in memory, so what such a command creates is gone at the next command and a list
 * shows only this command's own work. One line on stderr says so and how to keep state.
 */
export function noteLocalState(connection: Connection, out: Output): void {
  if (!connection.local) return;
  out.note(
    'the local reference server keeps nothing after this command exits; to keep voices and transcripts, run `soundclone server` in another terminal and pass its --base-url and --access-key (or set SOUNDCLONE_BASE_URL and SOUNDCLONE_ACCESS_KEY)',
  );
}
