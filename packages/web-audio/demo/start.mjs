// Runs the live-captions demo: `pnpm build && pnpm --filter @soundclone/web-audio demo`, then open the
// printed URL in Chrome, Edge or Firefox (127.0.0.1 is a secure context, so the microphone works).
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
// Next to dev-server.ts, so the paths it and the worklet build derive from import.meta.url stay right.
const out = join(here, '.dev-server.mjs');
await build({ entryPoints: [join(here, 'dev-server.ts')], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile: out, logLevel: 'warning' });
const { startDemo } = await import(pathToFileURL(out).href);
const port = Number(process.env.PORT ?? 8787);
// Real speech recognition when PocketSphinx is installed (npm run setup does), so your voice becomes text.
const demo = await startDemo({ port, serverOptions: { recognizer: 'auto' } });
process.stdout.write(`Live captions demo: ${demo.url}/  (reference server ${demo.server.url}, recognizer ${demo.server.recognizer.id})\n`);
if (demo.server.recognizer.notice !== undefined) process.stdout.write(`${demo.server.recognizer.notice}\n`);
const stop = async () => {
  await demo.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
