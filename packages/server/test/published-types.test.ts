import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The published type declarations of @soundclone/server must compile for a consumer that installs only
 * its dependencies (devDependencies such as @types/ws, @types/busboy and @types/pdfkit are absent) and
 * checks library types (skipLibCheck: false). The package is packed as npm would ship it and unpacked
 * into a clean folder; runtime dependencies are linked from the workspace, so no network is needed.
 */
const serverDir = resolve(import.meta.dirname, '..');
const root = resolve(serverDir, '../..');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'soundclone-server-types-'));
  const tarballs = join(dir, 'tarballs');
  mkdirSync(tarballs);
  execFileSync('pnpm', ['pack', '--pack-destination', tarballs], { cwd: serverDir, stdio: 'pipe' });
  const tarball = readdirSync(tarballs)[0] as string;
  const target = join(dir, 'node_modules', '@soundclone', 'server');
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['-xzf', join(tarballs, tarball), '-C', target, '--strip-components=1']);
  const manifest = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  for (const dep of Object.keys(manifest.dependencies ?? {})) {
    const link = join(dir, 'node_modules', dep);
    if (existsSync(link)) continue;
    mkdirSync(join(link, '..'), { recursive: true });
    symlinkSync(realpathSync(join(serverDir, 'node_modules', dep)), link, 'dir');
  }
  // A Node server's consumer has Node's types; nothing else.
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  symlinkSync(realpathSync(join(root, 'node_modules', '@types', 'node')), join(dir, 'node_modules', '@types', 'node'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
}, 120_000);

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('@soundclone/server published types', () => {
  it('declare ws, busboy and pdfkit types only where a consumer has them: nowhere', () => {
    expect(existsSync(join(dir, 'node_modules', '@types', 'ws'))).toBe(false);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: false, lib: ['ES2023', 'DOM'], types: ['node'] },
      files: ['consumer.ts'],
    }));
    writeFileSync(join(dir, 'consumer.ts'), `
      import { startServer, type RunningServer, type ServerOptions, type SocketConfig, type SocketLogEntry } from '@soundclone/server';
      const options: ServerOptions = { port: 0, host: '127.0.0.1', accessKeys: ['k'] };
      export async function run(): Promise<RunningServer> { return startServer(options); }
      export type Used = [SocketConfig, SocketLogEntry];
    `);
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const run = spawnSync(process.execPath, [tsc, '-p', dir], { cwd: dir, encoding: 'utf8' });
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
