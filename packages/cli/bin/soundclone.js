#!/usr/bin/env node
// The installed command. It lives outside dist/ so that a package manager can link it before the
// first build; in a checkout that was not built yet it says so instead of failing on an import.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/bin.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('soundclone: this checkout is not built yet: run `pnpm build` (or `npm run setup`) first\n');
  process.exitCode = 1;
} else {
  await import(entry.href);
}
