#!/usr/bin/env node
/**
 * Builds native/build/pocketsphinx.node, the Node-API binding over Debian's libpocketsphinx, with the
 * system C compiler. No node-gyp: one translation unit needs one compiler call, and node-gyp would want
 * python and, without a configured nodedir, to download Node's headers. The headers come from the
 * running Node's own install (<prefix>/include/node, or npm_config_nodedir).
 *
 *   node scripts/build-pocketsphinx.mjs              build if missing or stale; exit 1 with the reason
 *   node scripts/build-pocketsphinx.mjs --if-available   exit 0 with a notice when PocketSphinx is not installed
 *
 * npm run setup calls it with --if-available; the server calls it lazily when the binding is missing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'native', 'pocketsphinx-addon.c');
const output = join(root, 'native', 'build', 'pocketsphinx.node');
const optional = process.argv.includes('--if-available');

function fail(message) {
  if (optional) {
    process.stdout.write(`pocketsphinx binding not built: ${message}\n`);
    process.exit(0);
  }
  process.stderr.write(`pocketsphinx binding not built: ${message}\n`);
  process.exit(1);
}

function nodeHeaders() {
  const candidates = [
    process.env.npm_config_nodedir ? join(process.env.npm_config_nodedir, 'include', 'node') : undefined,
    join(dirname(process.execPath), '..', 'include', 'node'),
  ].filter(Boolean);
  return candidates.find((dir) => existsSync(join(dir, 'node_api.h')));
}

function pkgConfig(args) {
  try {
    return execFileSync('pkg-config', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split(/\s+/).filter(Boolean);
  } catch {
    return undefined;
  }
}

if (existsSync(output) && statSync(output).mtimeMs >= statSync(source).mtimeMs) {
  process.stdout.write(`pocketsphinx binding up to date: ${output}\n`);
  process.exit(0);
}
const headers = nodeHeaders();
if (headers === undefined) fail(`no node_api.h under ${join(dirname(process.execPath), '..', 'include', 'node')} (install Node with its headers or set npm_config_nodedir)`);
const flags = pkgConfig(['--cflags', '--libs', 'pocketsphinx', 'sphinxbase']);
if (flags === undefined) fail('libpocketsphinx-dev is not installed (apt-get install pocketsphinx pocketsphinx-en-us libpocketsphinx-dev; pkg-config too)');
const compiler = process.env.CC ?? 'cc';
mkdirSync(dirname(output), { recursive: true });
const temporary = `${output}.${process.pid}.tmp`;
const platform = process.platform === 'darwin' ? ['-undefined', 'dynamic_lookup'] : [];
try {
  execFileSync(
    compiler,
    ['-O2', '-shared', '-fPIC', '-Wall', '-DNODE_GYP_MODULE_NAME=pocketsphinx', `-I${headers}`, source, '-o', temporary, ...flags, ...platform],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
} catch (error) {
  fail(`${compiler} failed (${error.message.split('\n')[0]})`);
}
// Rename into place so a concurrent loader never opens a half-written file.
renameSync(temporary, output);
process.stdout.write(`pocketsphinx binding built: ${output}\n`);
