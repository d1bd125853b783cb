import { readFileSync } from 'node:fs';

/** The CLI's own version, read from its package.json (one source of truth, also in a packed tarball). */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
