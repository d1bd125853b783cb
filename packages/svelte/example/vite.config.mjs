import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// In an app of your own, `npm i @soundclone/svelte @soundclone/web-audio svelte` and drop the alias:
// here the example uses this checkout's built package.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [svelte()],
  resolve: { alias: { '@soundclone/svelte': fileURLToPath(new URL('../dist/index.js', import.meta.url)) } },
  build: { outDir: 'dist', emptyOutDir: true },
  logLevel: 'warn',
});
