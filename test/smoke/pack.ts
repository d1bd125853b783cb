import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Installs packed workspace packages into a consumer folder without a registry: `pnpm pack` (exactly
 * what publishing ships, workspace: ranges rewritten), unpacked into node_modules/@soundclone/NAME, and
 * third-party dependencies linked from the workspace's own installed copies. npm-style flat layout: a
 * package finds what sits in the consumer's node_modules, and nothing else.
 */
export const root = resolve(import.meta.dirname, '../..');

export interface PackedManifest {
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>;
}

/** Packs packages/PKG into `tarballs` as publishing would (`pnpm pack`). Returns the tarball's file name. */
export function packTarball(pkg: string, tarballs: string): string {
  const before = new Set(readdirSync(tarballs));
  execFileSync('pnpm', ['pack', '--pack-destination', tarballs], { cwd: join(root, 'packages', pkg), stdio: 'pipe' });
  const tarball = readdirSync(tarballs).find((f) => !before.has(f));
  if (tarball === undefined) throw new Error(`pnpm pack produced nothing for ${pkg}`);
  return tarball;
}

/** Packs packages/PKG into `tarballs` and unpacks it into CONSUMER/node_modules/@soundclone/PKG. Returns that folder. */
export function unpackInto(consumer: string, pkg: string, tarballs: string): string {
  const tarball = packTarball(pkg, tarballs);
  const target = join(consumer, 'node_modules', '@soundclone', pkg);
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['-xzf', join(tarballs, tarball), '-C', target, '--strip-components=1']);
  return target;
}

/** The manifest of an unpacked package. */
export function manifestOf(target: string): PackedManifest {
  return JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as PackedManifest;
}

/** Links `names` into CONSUMER/node_modules from packages/PKG/node_modules (their installed copies); existing links stay. */
export function linkFromWorkspace(consumer: string, pkg: string, names: Iterable<string>): void {
  for (const dep of names) {
    if (dep.startsWith('@soundclone/')) continue;
    const link = join(consumer, 'node_modules', dep);
    if (existsSync(link)) continue;
    mkdirSync(join(link, '..'), { recursive: true });
    symlinkSync(realpathSync(join(root, 'packages', pkg, 'node_modules', dep)), link, 'dir');
  }
}
