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

/** The worklet module's text. Core comes from its TypeScript sources (tree-shaken to the SampleRing). */
export async function bundleWorklet({ minify = false } = {}) {
  const result = await build({
    entryPoints: [join(pkg, 'src', 'worklet', 'capture-worklet.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    minify,
    legalComments: 'none',
    alias: { '@soundclone/core': coreSrc },
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
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
