// Builds the capture worklet as its own artifact: one self-contained ES module (no imports left, so
// AudioWorklet.addModule() can load it from any URL or a Blob URL under a strict CSP), plus a module
// that exports its text for Blob URLs. Run by `pnpm --filter @soundclone/web-audio build` and before
// packing; the browser tests call bundleWorklet() so they never depend on a stale dist/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, '..');
const coreSrc = join(pkg, '..', 'core', 'src', 'index.ts');
const coreInternalSrc = join(pkg, '..', 'core', 'src', 'internal.ts');

/**
 * The worklet module's text, minified (the voice gate made it 12 KB gzipped unminified, 6.7 KB
 * minified). Core comes from its TypeScript sources, tree-shaken to the SampleRing and the voice gate.
 * `ws` is marked external only because core's socket module names it in a lazy import() that the
 * worklet never reaches: the bundle is checked to hold no import at all.
 */
export async function bundleWorklet({ minify = true } = {}) {
  const result = await build({
    entryPoints: [join(pkg, 'src', 'worklet', 'capture-worklet.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    minify,
    legalComments: 'none',
    alias: { '@soundclone/core/internal': coreInternalSrc, '@soundclone/core': coreSrc },
    external: ['ws'],
    logLevel: 'silent',
  });
  const code = result.outputFiles[0].text;
  if (/\bimport\s*\(|\bfrom\s*["']/.test(code)) throw new Error('the capture worklet bundle still imports a module: it must be self-contained');
  return code;
}

/** Writes dist/capture-worklet.js and dist/capture-worklet-source.js (+ their .d.ts). */
export async function writeWorkletArtifacts(outDir = join(pkg, 'dist')) {
  const code = await bundleWorklet();
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'capture-worklet.js'), code);
  writeFileSync(join(outDir, 'capture-worklet.d.ts'), '// The capture AudioWorklet module: load it with audioWorklet.addModule(url), do not import it.\nexport {};\n');
  writeFileSync(join(outDir, 'capture-worklet-source.js'), `/** The capture worklet's source, for a Blob URL. */\nexport default ${JSON.stringify(code)};\n`);
  writeFileSync(join(outDir, 'capture-worklet-source.d.ts'), "/** The capture worklet module's source text: `URL.createObjectURL(new Blob([source], { type: 'text/javascript' }))`. */\ndeclare const source: string;\nexport default source;\n");
  return code.length;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bytes = await writeWorkletArtifacts();
  if (!process.argv.includes('--quiet')) process.stdout.write(`capture-worklet.js: ${bytes} bytes\n`);
}
