import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const packages = join(here, '..', '..', 'packages');
// esbuild comes from web-audio, which builds its worklet with it; svelte's compiler from the Svelte binding's dev dependencies.
// (its types are web-audio's, not this folder's: the little used here is written out.)
type OnLoad = (args: { path: string }) => Promise<{ contents: string; loader: 'js'; resolveDir: string }>;
type Plugin = { name: string; setup(build: { onLoad(options: { filter: RegExp }, load: OnLoad): void }): void };
type Build = (options: Record<string, unknown> & { plugins?: Plugin[] }) => Promise<{ outputFiles: Array<{ text: string }> }>;
const { build } = createRequire(join(packages, 'web-audio', 'package.json'))('esbuild') as { build: Build };

/**
 * Bundles a framework binding's test page (`page`, in its test folder) for Chromium, as an app's bundler would in development:
 * the packages from their TypeScript sources, the framework from the binding's own dependencies,
 * `process.env.NODE_ENV` "development" (React's StrictMode double mount happens only there), and
 * `.svelte` files compiled for the client by svelte/compiler.
 */
export async function bundleBindingPage(binding: 'react' | 'vue' | 'svelte', page = 'page.ts'): Promise<string> {
  const svelte: Plugin = {
    name: 'svelte',
    setup(b) {
      b.onLoad({ filter: /\.svelte$/ }, async (args) => {
        const { compile } = (await import(createRequire(join(packages, 'svelte', 'package.json')).resolve('svelte/compiler'))) as typeof import('svelte/compiler');
        const { js } = compile(await readFile(args.path, 'utf8'), { generate: 'client', runes: true, dev: false, filename: args.path });
        return { contents: js.code, loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
  const result = await build({
    entryPoints: [join(packages, binding, 'test', page)],
    bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, legalComments: 'none', logLevel: 'silent',
    conditions: ['browser', 'development'],
    alias: { '@soundclone/core': join(packages, 'core', 'src'), '@soundclone/web-audio': join(packages, 'web-audio', 'src', 'index.ts') },
    define: { 'process.env.NODE_ENV': '"development"', __VUE_OPTIONS_API__: 'true', __VUE_PROD_DEVTOOLS__: 'false', __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false' },
    plugins: [svelte],
  });
  return result.outputFiles[0]!.text;
}
