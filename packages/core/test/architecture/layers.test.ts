import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layers of @soundclone/core point one way (packages/core/README.md "Layout"). Every module under
 * src/ is read with the TypeScript parser; each import, re-export, `import()` and `import('x')` type is
 * checked against the table below. A folder may import itself and layers of a lower rank, never one
 * of its own rank or above. Platform modules (`node:*`, `ws`, `isomorphic-ws`) are reached only
 * lazily, from the one module that needs each, so core imports in browsers, workers and worklets.
 */
const src = resolve(import.meta.dirname, '../../src');
const manifest = JSON.parse(readFileSync(resolve(src, '../package.json'), 'utf8')) as {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

/** Rank of each top-level folder (or root file) of src/. Same rule as the README's folder map. */
const LAYERS: Record<string, number> = {
  'protocol.ts': 0,
  types: 1,
  errors: 2,
  util: 3,
  parse: 4,
  dsp: 4,
  http: 4,
  webhooks: 5,
  realtime: 5,
  captions: 6,
  client: 6,
  rx: 7,
  'index.ts': 8,
  'internal.ts': 8,
  'rx.ts': 8,
};

/** The only modules that may load a platform module, each only the one named, and only with `import()`. */
const PLATFORM_LOADERS: Record<string, string> = {
  'realtime/socket/transport.ts': 'ws',
  'util/node-file.ts': 'node:fs/promises',
};

/** Optional peers (each also in peerDependenciesMeta as optional) and the one folder, behind its own subpath, that may import each. */
const OPTIONAL_PEER_HOMES: Record<string, string> = {
  rxjs: 'rx',
};

const isPlatform = (specifier: string): boolean => specifier.startsWith('node:') || specifier === 'ws' || specifier === 'isomorphic-ws';

interface ModuleReference {
  readonly specifier: string | undefined;
  readonly kind: 'static' | 'dynamic' | 'type';
}

function literalText(node: ts.Node, constants: ReadonlyMap<string, string>): string | undefined {
  if (ts.isStringLiteralLike(node)) return node.text;
  if (ts.isAsExpression(node) || ts.isParenthesizedExpression(node)) return literalText(node.expression, constants);
  if (ts.isIdentifier(node)) return constants.get(node.text);
  return undefined;
}

/** Every module a source names: import/export declarations, `import()` (literal or a const of the file) and `import('x')` types. */
function moduleReferences(file: string, text: string): ModuleReference[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const constants = new Map<string, string>();
  const refs: ModuleReference[] = [];
  const visitConstants = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined && ts.isStringLiteralLike(node.initializer)) {
      constants.set(node.name.text, node.initializer.text);
    }
    ts.forEachChild(node, visitConstants);
  };
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined) {
      refs.push({ specifier: literalText(node.moduleSpecifier, constants), kind: 'static' });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      refs.push({ specifier: node.arguments[0] === undefined ? undefined : literalText(node.arguments[0], constants), kind: 'dynamic' });
    } else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require') {
      refs.push({ specifier: node.arguments[0] === undefined ? undefined : literalText(node.arguments[0], constants), kind: 'static' });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      refs.push({ specifier: literalText(node.argument.literal, constants), kind: 'type' });
    }
    ts.forEachChild(node, visit);
  };
  visitConstants(source);
  visit(source);
  return refs;
}

/** The layer a path under src/ belongs to: its first folder, or the file itself at the root (as .ts: imports name the emitted .js). */
function layerOf(path: string): string {
  return (path.split('/')[0] as string).replace(/\.js$/, '.ts');
}

/** Violations of the rules for one module (path relative to src/, '/'-separated). */
function violations(path: string, text: string): string[] {
  const found: string[] = [];
  const from = layerOf(path);
  const rank = LAYERS[from];
  if (rank === undefined) return [`${path}: src/${from} has no layer: give it a rank in this test and a line in packages/core/README.md "Layout"`];
  const runtimeDependencies = new Set(Object.keys(manifest.dependencies ?? {}));
  for (const { specifier, kind } of moduleReferences(path, text)) {
    if (specifier === undefined) {
      found.push(`${path}: an import() whose module is neither a literal nor a const of the file (unchecked)`);
      continue;
    }
    if (specifier.startsWith('.')) {
      const target = relative(src, resolve(src, dirname(path), specifier)).split('\\').join('/');
      if (target.startsWith('..')) {
        found.push(`${path}: imports ${specifier}, outside src/`);
        continue;
      }
      const to = layerOf(target);
      const toRank = LAYERS[to];
      if (to === from) continue;
      if (toRank === undefined) found.push(`${path}: imports ${specifier}: src/${to} has no layer`);
      else if (toRank >= rank) found.push(`${path}: ${from} (layer ${rank}) imports ${target} (${to}, layer ${toRank}): only lower layers`);
      continue;
    }
    if (isPlatform(specifier)) {
      if (kind !== 'dynamic') found.push(`${path}: ${kind} import of the platform module ${specifier}: it would load (or need its types) in every runtime`);
      else if (PLATFORM_LOADERS[path] !== specifier) found.push(`${path}: loads the platform module ${specifier}; only ${Object.entries(PLATFORM_LOADERS).map(([f, m]) => `${f} (${m})`).join(', ')} may`);
      continue;
    }
    const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] as string);
    const peerHome = OPTIONAL_PEER_HOMES[name];
    if (peerHome !== undefined) {
      if (from !== peerHome) found.push(`${path}: imports the optional peer ${specifier}; only ${peerHome}/ may (users without it never load it)`);
      continue;
    }
    if (!runtimeDependencies.has(name)) found.push(`${path}: imports ${specifier}, not a dependency of @soundclone/core`);
  }
  return found;
}

function sources(dir = src): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [relative(src, full).split('\\').join('/')] : [];
  });
}

const files = sources();
const read = (path: string): string => readFileSync(join(src, path), 'utf8');

describe('core layers', () => {
  it('reads every module of src/', () => {
    expect(files.length).toBeGreaterThan(50);
    for (const path of ['errors/realtime-error.ts', 'parse/realtime.ts', 'realtime/socket/transport.ts', 'client/soundclone.ts']) expect(files).toContain(path);
  });

  it('every folder imports only from layers below it', () => {
    expect(files.flatMap((path) => violations(path, read(path)))).toEqual([]);
  });

  it('realtime/, dsp/, parse/, errors/ and http/ never import client/', () => {
    const below = files.filter((path) => ['realtime', 'dsp', 'parse', 'errors', 'http'].includes(layerOf(path)));
    const reaching = below.flatMap((path) =>
      moduleReferences(path, read(path))
        .filter((r) => r.specifier?.startsWith('.') === true && layerOf(relative(src, resolve(src, dirname(path), r.specifier)).split('\\').join('/')) === 'client')
        .map((r) => `${path} -> ${r.specifier}`),
    );
    expect(reaching).toEqual([]);
  });

  it('platform modules are loaded lazily, each by its one module, and ws is an optional peer', () => {
    for (const [path, specifier] of Object.entries(PLATFORM_LOADERS)) {
      expect(moduleReferences(path, read(path))).toContainEqual({ specifier, kind: 'dynamic' });
    }
    expect(manifest.dependencies ?? {}).not.toHaveProperty('ws');
    expect(manifest.dependencies ?? {}).not.toHaveProperty('isomorphic-ws');
    for (const peer of Object.keys(OPTIONAL_PEER_HOMES)) {
      expect(manifest.dependencies ?? {}).not.toHaveProperty(peer);
      expect(manifest.peerDependenciesMeta?.[peer]?.optional).toBe(true);
    }
    expect(manifest.peerDependencies?.['ws']).toMatch(/^\^8\./);
    expect(manifest.peerDependenciesMeta?.['ws']?.optional).toBe(true);
  });

  it('catches what it is meant to catch', () => {
    expect(violations('realtime/x.ts', `import { SoundClone } from '../client/soundclone.js';`)).toHaveLength(1);
    expect(violations('parse/x.ts', `export { Realtime } from '../client/stt/realtime.js';`)).toHaveLength(1);
    expect(violations('errors/x.ts', `import type { Transport } from '../http/transport.js';`)).toHaveLength(1);
    expect(violations('dsp/x.ts', `import { path } from '../http/path.js';`)).toHaveLength(1);
    expect(violations('http/x.ts', `const m = await import('../client/options.js');`)).toHaveLength(1);
    expect(violations('realtime/socket/transport.ts', `import WebSocket from 'ws';`)).toHaveLength(1);
    expect(violations('realtime/x.ts', `const s = 'ws'; const m = await import(s);`)).toHaveLength(1);
    expect(violations('realtime/x.ts', `const m = await import(\`\${name}\`);`)).toHaveLength(1);
    expect(violations('util/read.ts', `import { readFile } from 'node:fs/promises';`)).toHaveLength(1);
    expect(violations('client/x.ts', `type F = typeof import('node:fs');`)).toHaveLength(1);
    expect(violations('realtime/x.ts', `import IsoWs from 'isomorphic-ws';`)).toHaveLength(1);
    expect(violations('widgets/x.ts', ``)).toHaveLength(1);
    expect(violations('realtime/x.ts', `import { Subject } from 'rxjs';`)).toHaveLength(1);
    expect(violations('rx/x.ts', `import { Observable } from 'rxjs';`)).toEqual([]);
    expect(violations('client/x.ts', `import { parseSession } from '../parse/realtime.js'; import { RealtimeSocketSession } from '../realtime/realtime-session.js';`)).toEqual([]);
    expect(violations('realtime/socket/transport.ts', `const specifier = 'ws'; await import(specifier);`)).toEqual([]);
  });
});

describe('errors', () => {
  it('every Error subclass of core lives in errors/', () => {
    const outside: string[] = [];
    for (const path of files.filter((p) => layerOf(p) !== 'errors')) {
      const visit = (node: ts.Node): void => {
        if (ts.isClassLike(node)) {
          for (const clause of node.heritageClauses ?? []) {
            if (clause.token !== ts.SyntaxKind.ExtendsKeyword) continue;
            for (const type of clause.types) if (/Error$/.test(type.expression.getText())) outside.push(`${path}: ${node.name?.text ?? 'class'} extends ${type.expression.getText()}`);
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true));
    }
    expect(outside).toEqual([]);
  });

  it('docs/errors.md lists every code the error classes use', () => {
    const doc = readFileSync(resolve(src, '../../../docs/errors.md'), 'utf8');
    const codes = new Set(files.filter((p) => layerOf(p) === 'errors').flatMap((p) => [...read(p).matchAll(/'([A-Z][A-Z0-9_]{3,})'/g)].map((m) => m[1] as string)));
    expect(codes).toContain('REALTIME_NO_WEBSOCKET');
    expect(codes).toContain('DSP_UNSUPPORTED_RATE');
    expect([...codes].filter((code) => !doc.includes(`\`${code}\``))).toEqual([]);
  });
});
