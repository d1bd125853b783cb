import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer, type ServerOptions } from '@soundclone/server';
import { buildCli } from './cli.js';

/** A reference server for CLI runs, the environment that points the CLI at it, and a scratch directory. */
export interface CliServer {
  readonly server: RunningServer;
  /** SOUNDCLONE_BASE_URL and SOUNDCLONE_ACCESS_KEY for `cli(args, env)`. */
  readonly env: Record<string, string>;
  readonly dir: string;
  close(): Promise<void>;
}

/**
 * Builds the CLI, starts the server with `key` (the one `env` names; further keys, such as a second
 * account, in `options.accessKeys`) and any further options, makes the scratch directory.
 */
export async function startCliServer(key: string, scratchPrefix: string, options: Partial<ServerOptions> = {}): Promise<CliServer> {
  buildCli();
  const server = await startServer({ port: 0, host: '127.0.0.1', ...options, accessKeys: [key, ...(options.accessKeys ?? [])] });
  const dir = mkdtempSync(join(tmpdir(), scratchPrefix));
  return {
    server,
    env: { SOUNDCLONE_BASE_URL: server.url, SOUNDCLONE_ACCESS_KEY: key },
    dir,
    close: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
