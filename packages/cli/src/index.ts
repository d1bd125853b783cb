/**
 * @soundclone/cli: the `soundclone` command. Its entry runs a command line in-process, with the
 * streams and environment given, which is how the command is embedded or tested without a process.
 */
export { main, USAGE, type Io } from './main.js';
export { VERSION } from './version.js';
export type { Env } from './context.js';
