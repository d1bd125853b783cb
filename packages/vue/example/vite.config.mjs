import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import vue from '@vitejs/plugin-vue';

// In an app of your own, `npm i @soundclone/vue @soundclone/web-audio vue` and drop the alias:
// here the example uses this checkout's built package.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [vue()],
  resolve: { alias: { '@soundclone/vue': fileURLToPath(new URL('../dist/index.js', import.meta.url)) } },
  build: { outDir: 'dist', emptyOutDir: true },
  logLevel: 'warn',
});
