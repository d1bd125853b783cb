import type { Readable, Writable } from 'node:stream';
import { isSoundCloneError } from '@soundclone/core';
import type { Command } from './command.js';
import { captions } from './commands/captions.js';
import { cluster } from './commands/cluster.js';
import { devices } from './commands/devices.js';
import { history, user, voices } from './commands/rest.js';
import { server } from './commands/server.js';
import { transcribe } from './commands/transcribe.js';
import { transcripts } from './commands/transcripts.js';
import type { Env } from './context.js';
import { Output } from './output.js';
import { VERSION } from './version.js';

export const USAGE = `usage: soundclone COMMAND [options]

  captions [FILE | - | --mic [DEVICE] | --sample]   live captions in the terminal
  transcribe FILE|URL [--wait] [--format F] [--out PATH]   a batch transcription
  transcripts get|wait ID [--format F] [--out PATH]   the transcript of a transcription, by id
  voices list | create --name NAME FILE... | rename ID NAME
  user                                            plan and remaining characters
  history [--limit N]                             transcriptions, newest first
  devices                                         microphones
  server [--port N] [--access-key KEY] [flags]    run the reference server (every flag of its own command)
  cluster [--nodes 3] [--access-key KEY] [flags]  run it as several nodes over PostgreSQL behind haproxy
  version                                         the CLI's version (also --version)

Every command: --base-url URL, --access-key KEY (or SOUNDCLONE_BASE_URL, SOUNDCLONE_ACCESS_KEY;
with neither, the local reference server runs in-process), --json, --debug, --help.
The local reference server keeps voices, transcriptions and balances between commands in
$SOUNDCLONE_DATA_DIR, else $XDG_DATA_HOME/soundclone, else ~/.local/share/soundclone;
--ephemeral keeps nothing. It recognizes speech with --recognizer auto|pocketsphinx|deterministic
(default auto: PocketSphinx when installed, else made-up words with a notice).`;

const version: Command = async (ctx) => (ctx.out.json ? ctx.out.data({ version: VERSION }) : ctx.out.print(VERSION), 0);

const COMMANDS: Readonly<Record<string, Command>> = { captions, transcribe, transcripts, voices, user, history, devices, server, cluster, version };

export interface Io {
  readonly stdout: Writable & { isTTY?: boolean; columns?: number };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly stdin: Readable;
  readonly env: Env;
}

/** Runs one command; resolves with the exit code. Errors are one line (a stack only with --debug). */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [name, ...args] = argv;
  const out = new Output(io.stdout, io.stderr, args.includes('--json'));
  if (name === undefined) {
    // No command is a usage error: the usage goes to stderr, so a script piping stdout sees nothing.
    io.stderr.write(`${USAGE}\n`);
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    out.print(USAGE);
    return 0;
  }
  if (name === '--version' || name === '-V') {
    out.print(VERSION);
    return 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    io.stderr.write(`soundclone: error: unknown command ${JSON.stringify(name)}; run soundclone --help\n`);
    return 2;
  }
  try {
    return await command({ args, env: io.env, out, stdin: io.stdin });
  } catch (caught) {
    io.stderr.write(`soundclone: error: ${describe(caught)}\n`);
    if (args.includes('--debug') && caught instanceof Error && caught.stack !== undefined) io.stderr.write(`${caught.stack}\n`);
    return isSoundCloneError(caught) && caught.code === 'CLI_USAGE' ? 2 : 1;
  }
}

function describe(caught: unknown): string {
  if (!(caught instanceof Error)) return String(caught);
  const code = (caught as { code?: unknown }).code;
  const message = caught.message.split('\n')[0] ?? '';
  if (isSoundCloneError(caught) && caught.code === 'CLI_USAGE') return `${message} (see --help)`;
  return typeof code === 'string' ? `${message} [${code}]` : message;
}
