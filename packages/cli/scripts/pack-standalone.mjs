#!/usr/bin/env node
/**
 * Packs the soundclone command as one tarball that runs alone:
 *
 *   npx --yes ./soundclone-cli-<version>.tgz captions --sample
 *
 * The CLI depends on @soundclone/core, @soundclone/node-mic and @soundclone/server, which are not on a
 * registry, and they depend on third-party packages (ws, rxjs, docx, pdfkit, pvrecorder, ...). Every one
 * of them goes into the tarball's node_modules as a bundled dependency, so installing the tarball
 * fetches nothing: it works offline, behind a registry that lacks a package, and with an empty npm cache.
 *
 *   node packages/cli/scripts/pack-standalone.mjs [--pack-destination DIR]   (default: the current folder)
 *
 * Why bundled dependencies and not a bundler: the packages find files next to their own modules at run
 * time (the speech sample, the CLI's package.json, pdfkit's font metrics, the PocketSphinx binding and its
 * build script, pvrecorder's per-platform libraries) and load some modules by name at run time
 * (ws, wav-decoder). Shipped as installed packages, that code runs exactly as it does in the
 * workspace and as the package-by-package smoke test checks it; a single-file bundle would have to
 * relocate each of those. The price is size (about 17 MB packed).
 *
 * Steps, all from the workspace's lockfile and pnpm store (no registry needed once installed):
 *   1. `pnpm pack` each @soundclone package: exactly what publishing would ship, workspace: ranges
 *      rewritten to versions;
 *   2. `pnpm deploy` the CLI with a hoisted (npm-style) node_modules: its production dependency tree at
 *      the lockfile's versions, with the workspace's overrides applied;
 *   3. lay the CLI's package out with that tree's third-party packages and the packed @soundclone
 *      packages in node_modules, mark the CLI's dependencies as bundleDependencies, `npm pack` it.
 *
 * The PocketSphinx binding is not shipped (it is built against the system's libpocketsphinx): with the
 * library installed, the server builds it on first use inside the installed package; without it the
 * local server falls back to the deterministic recognizer and says so.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const cliRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const workspace = resolve(cliRoot, '..', '..');
const { values } = parseArgs({ options: { 'pack-destination': { type: 'string' } } });
const destination = resolve(values['pack-destination'] ?? process.cwd());
// npm and pnpm are .cmd files on Windows, which execFile runs only through a shell.
const shell = process.platform === 'win32';

function run(command, args, cwd) {
  return execFileSync(command, args, { cwd, shell, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function writeJson(path, value) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** The workspace packages the CLI needs, found by following @soundclone/ dependencies from it. */
function workspaceClosure() {
  const found = new Set();
  const visit = (dir) => {
    for (const dep of Object.keys(readJson(join(dir, 'package.json')).dependencies ?? {})) {
      if (!dep.startsWith('@soundclone/') || found.has(dep)) continue;
      found.add(dep);
      visit(join(workspace, 'packages', dep.slice('@soundclone/'.length)));
    }
  };
  visit(cliRoot);
  return [...found];
}

/** `pnpm pack` a workspace package and unpack it into target. */
function packInto(packageDir, scratch, target) {
  const before = new Set(readdirSync(scratch));
  run('pnpm', ['pack', '--pack-destination', scratch], packageDir);
  const tarball = readdirSync(scratch).find((f) => !before.has(f));
  if (tarball === undefined) throw new Error(`pnpm pack produced nothing in ${packageDir}`);
  mkdirSync(target, { recursive: true });
  run('tar', ['-xzf', join(scratch, tarball), '-C', target, '--strip-components=1'], scratch);
}

/**
 * pnpm-workspace.yaml `overrides` of the form `parent>child: range`. The deployed tree follows them, so
 * the bundled parent's manifest is given the same range: npm then sees a consistent tree and never tries
 * to replace the child from a registry.
 */
function parentChildOverrides() {
  const text = readFileSync(join(workspace, 'pnpm-workspace.yaml'), 'utf8');
  const block = /^overrides:\n((?:[ \t]+.*\n?|#.*\n?|\n)*)/m.exec(text)?.[1] ?? '';
  const overrides = [];
  for (const line of block.split('\n')) {
    const match = /^\s+['"]?([^'"\s>]+)>([^'"\s:]+)['"]?:\s*['"]?([^'"\s#]+)/.exec(line);
    if (match !== null) overrides.push({ parent: match[1], child: match[2], range: match[3] });
  }
  return overrides;
}

for (const dir of ['core', 'node-mic', 'server', 'cli']) {
  if (!existsSync(join(workspace, 'packages', dir, 'dist', 'index.js'))) {
    process.stderr.write(`pack-standalone: packages/${dir} is not built: run \`pnpm build\` first\n`);
    process.exit(1);
  }
}

const scratch = mkdtempSync(join(tmpdir(), 'soundclone-standalone-'));
try {
  const tarballs = join(scratch, 'tarballs');
  const deployed = join(scratch, 'deployed');
  const staged = join(scratch, 'package');
  mkdirSync(tarballs);

  // 1 and 3: the CLI's own files, then each workspace package under node_modules/@soundclone.
  packInto(cliRoot, tarballs, staged);
  const ours = workspaceClosure();
  for (const name of ours) {
    packInto(join(workspace, 'packages', name.slice('@soundclone/'.length)), tarballs, join(staged, 'node_modules', name));
  }

  // 2: the third-party tree. inject-workspace-packages lets deploy reuse the shared lockfile.
  run('pnpm', ['--filter', '@soundclone/cli', 'deploy', '--prod', '--prefer-offline', '--config.inject-workspace-packages=true', '--config.node-linker=hoisted', deployed], workspace);
  const modules = join(deployed, 'node_modules');
  for (const entry of readdirSync(modules)) {
    // Dot entries are pnpm's bookkeeping; @soundclone/* came packed above.
    if (entry.startsWith('.') || entry === '@soundclone') continue;
    // A real copy: pnpm hard-links files from its store, and npm pack stalls on hard-linked files.
    cpSync(join(modules, entry), join(staged, 'node_modules', entry), { recursive: true, dereference: true });
  }

  for (const { parent, child, range } of parentChildOverrides()) {
    const manifestPath = join(staged, 'node_modules', parent, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = readJson(manifestPath);
    if (manifest.dependencies?.[child] === undefined) continue;
    manifest.dependencies[child] = range;
    writeJson(manifestPath, manifest);
  }

  const manifest = readJson(join(staged, 'package.json'));
  manifest.bundleDependencies = Object.keys(manifest.dependencies ?? {}).sort();
  // Nothing to run at install time: the files are built.
  delete manifest.scripts;
  delete manifest.devDependencies;
  writeJson(join(staged, 'package.json'), manifest);

  mkdirSync(destination, { recursive: true });
  const packed = JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], staged));
  const { filename, size, bundled } = packed[0];
  process.stdout.write(`${join(destination, filename)} (${(size / 1e6).toFixed(1)} MB, ${bundled.length} bundled packages)\n`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
