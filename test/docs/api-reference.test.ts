import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `pnpm run docs` builds the API reference with TypeDoc (typedoc.json at the root). Here the same build
 * writes into a temporary folder: with treatWarningsAsErrors it fails on any warning (a broken
 * {@link}, a README link TypeDoc cannot follow, a type that an exported signature uses but no entry
 * exports, so a reader would meet a name with no page), and the main classes of the packages get pages.
 */
const root = resolve(import.meta.dirname, '../..');
const out = mkdtempSync(join(tmpdir(), 'soundclone-api-'));

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('API reference (pnpm run docs)', () => {
  it('builds without warnings and documents the public classes of every package', () => {
    // The packages import each other through their built declarations, as `pnpm run docs` does.
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-b', 'tsconfig.json'], { cwd: root, stdio: 'pipe' });
    // notExported is what reports a type used by a public signature but left out of the entry.
    const config = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')) as { validation: { notExported: boolean }; packageOptions: { validation: { notExported: boolean } } };
    expect([config.validation.notExported, config.packageOptions.validation.notExported]).toEqual([true, true]);
    const typedoc = spawnSync(process.execPath, [join(root, 'node_modules/typedoc/bin/typedoc'), '--out', out], { cwd: root, encoding: 'utf8' });
    const log = `${typedoc.stdout}${typedoc.stderr}`;
    expect(log).not.toContain('not included in the documentation');
    expect(log).not.toMatch(/\[warning\]/);
    expect(typedoc.status).toBe(0);

    expect(existsSync(join(out, 'index.html'))).toBe(true);
    const classes = readdirSync(join(out, 'classes'));
    // Core has two documented entries (the main one and ./rx), so its pages are named per entry.
    for (const name of ['SoundClone', 'RealtimeSocketSession', 'FrameEncoder', 'Resampler', 'CaptionEngine']) {
      expect(classes).toContain(`_soundclone_core.index.${name}.html`);
    }
    const modules = readdirSync(join(out, 'modules'));
    for (const pkg of ['core', 'node-mic', 'web-audio', 'server', 'cli', 'react', 'vue', 'svelte']) {
      expect(modules).toContain(`_soundclone_${pkg}.html`);
    }
    expect(modules).toContain('_soundclone_core.rx.html');
    expect(readFileSync(join(out, 'modules', '_soundclone_core.rx.html'), 'utf8')).toContain('sessionStreams');
    const session = readFileSync(join(out, 'classes', '_soundclone_core.index.RealtimeSocketSession.html'), 'utf8');
    expect(session).toContain('finish');
  }, 120_000);
});
