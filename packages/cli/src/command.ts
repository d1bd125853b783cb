import type { Readable } from 'node:stream';
import type { Env } from './context.js';
import type { Output } from './output.js';

/** What a subcommand gets: its own arguments (after the subcommand name), the environment, the streams. */
export interface CommandContext {
  readonly args: readonly string[];
  readonly env: Env;
  readonly out: Output;
  readonly stdin: Readable;
}

export type Command = (ctx: CommandContext) => Promise<number>;
