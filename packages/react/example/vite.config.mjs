import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// In an app of your own, `npm i @soundclone/react @soundclone/web-audio react react-dom` and drop the alias:
// here the example uses this checkout's built package.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  resolve: { alias: { '@soundclone/react': fileURLToPath(new URL('../dist/index.js', import.meta.url)) } },
  build: { outDir: 'dist', emptyOutDir: true },
  logLevel: 'warn',
});
