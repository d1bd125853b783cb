import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { packTarball, root } from './pack.js';

/**
 * An example of examples/testing copied into a scratch app and installed with npm as a user would,
 * our packages from their packed tarballs (`file:…tgz`) and everything else from the npm registry
 * (through npm's cache when it has them: `--prefer-offline`). A tarball's own dependencies on our
 * packages (the kit's on core and server) point at the tarballs through `overrides`, as the registry
 * would serve them once published.
 */
export interface PackedSet {
  /** The folder holding the tarballs. */
  readonly dir: string;
  /** Package name (`@soundclone/core`) to tarball file name. */
  readonly files: ReadonlyMap<string, string>;
}

interface Manifest {
  name?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  overrides?: Record<string, string>;
}

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** Our packages an example needs: its own and, transitively, theirs (packages/NAME for @soundclone/NAME). */
export function soundclonePackagesOf(example: string): string[] {
  const seen = new Set<string>();
  const visit = (manifest: Manifest): void => {
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies })) {
      if (!name.startsWith('@soundclone/') || seen.has(name)) continue;
      seen.add(name);
      visit(readManifest(join(root, 'packages', name.slice('@soundclone/'.length))));
    }
  };
  visit(readManifest(join(root, 'examples', 'testing', example)));
  return [...seen].sort();
}

/** `pnpm pack`s each of `names` (`@soundclone/core`, …) into `dir`. */
export function packAll(names: Iterable<string>, dir: string): PackedSet {
  const files = new Map<string, string>();
  for (const name of names) files.set(name, packTarball(name.slice('@soundclone/'.length), dir));
  return { dir, files };
}

/**
 * Copies examples/testing/EXAMPLE (not its node_modules) to `app`, points its @soundclone
 * dependencies at the tarballs, and runs `npm install`. Returns npm's output.
 */
export function installScratchApp(example: string, app: string, packed: PackedSet, timeoutMs: number): string {
  const source = join(root, 'examples', 'testing', example);
  cpSync(source, app, { recursive: true, filter: (from) => !relative(source, from).split(sep).includes('node_modules') });
  const manifest = readManifest(app);
  const spec = (name: string): string => `file:${relative(app, join(packed.dir, packed.files.get(name) ?? missing(name))).split(sep).join('/')}`;
  const direct = new Set<string>();
  for (const field of ['dependencies', 'devDependencies'] as const) {
    const deps = manifest[field];
    if (deps === undefined) continue;
    for (const name of Object.keys(deps)) {
      if (!name.startsWith('@soundclone/')) continue;
      deps[name] = spec(name);
      direct.add(name);
    }
  }
  // npm refuses an override of a direct dependency unless it names that dependency's own spec (`$name`).
  manifest.overrides = Object.fromEntries([...packed.files.keys()].map((name) => [name, direct.has(name) ? `$${name}` : spec(name)]));
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, encoding: 'utf8', stdio: 'pipe', timeout: timeoutMs, env: cleanEnv() });
}

function missing(name: string): never {
  throw new Error(`${name} was not packed`);
}

/**
 * The environment a user's shell would give a test runner: without what this vitest run set for its
 * own workers (a nested vitest or jest would otherwise take it for theirs), and without colors.
 */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(VITEST|__VITEST|TINYPOOL)/.test(key) || key === 'NODE_OPTIONS' || key === 'NODE_ENV' || key === 'TEST') continue;
    env[key] = value;
  }
  return { ...env, NO_COLOR: '1', FORCE_COLOR: '0', CI: '1' };
}
