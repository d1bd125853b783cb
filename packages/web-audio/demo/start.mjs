// Runs the live-captions demo: `pnpm build && pnpm --filter @soundclone/web-audio demo`, then open the
// printed URL in Chrome, Edge or Firefox (127.0.0.1 is a secure context, so the microphone works).
// PORT picks the page's port (default 8788; the reference server's own default is 8787, so both run).
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const fail = (line) => {
  process.stderr.write(`${line}\n`);
  process.exit(1);
};
const port = process.env.PORT === undefined || process.env.PORT === '' ? 8788 : Number(process.env.PORT);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`Live captions demo: PORT must be a port number from 0 to 65535, not "${process.env.PORT}".`);
// Next to dev-server.ts, so the paths it and the worklet build derive from import.meta.url stay right.
const out = join(here, '.dev-server.mjs');
await build({ entryPoints: [join(here, 'dev-server.ts')], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile: out, logLevel: 'warning' });
const { startDemo } = await import(pathToFileURL(out).href);
let demo;
try {
  // Real speech recognition when PocketSphinx is installed (npm run setup does), so your voice becomes text.
  // SOUNDCLONE_BASE_URL and SOUNDCLONE_ACCESS_KEY (as for the CLI): a service already running, e.g. a
  // local cluster's balancer; without them the reference server runs in-process.
  const baseUrl = process.env.SOUNDCLONE_BASE_URL ?? '';
  const accessKey = process.env.SOUNDCLONE_ACCESS_KEY ?? '';
  if ((baseUrl === '') !== (accessKey === '')) fail('Live captions demo: set both SOUNDCLONE_BASE_URL and SOUNDCLONE_ACCESS_KEY to use a running service, or neither to start the reference server here.');
  demo = await startDemo(baseUrl !== '' ? { port, service: { baseUrl, accessKey } } : { port, serverOptions: { recognizer: 'auto' } });
} catch (caught) {
  if (caught?.code === 'DEMO_PORT_IN_USE') fail(`Live captions demo: port ${port} is already in use (is the reference server or another demo running?). Set PORT to a free port, e.g. PORT=${port === 65535 ? 8789 : port + 1} pnpm --filter @soundclone/web-audio demo`);
  if (caught?.code === 'DEMO_PORT_FORBIDDEN') fail(`Live captions demo: port ${port} needs privileges this process does not have. Set PORT to a port above 1023, e.g. PORT=8788.`);
  fail(`Live captions demo could not start: ${caught instanceof Error ? caught.message : String(caught)}`);
}
if (demo.server === undefined) process.stdout.write(`Live captions demo: ${demo.url}/  (service ${demo.baseUrl})\n`);
else process.stdout.write(`Live captions demo: ${demo.url}/  (reference server ${demo.server.url}, recognizer ${demo.server.recognizer.id})\n`);
if (demo.server?.recognizer.notice !== undefined) process.stdout.write(`${demo.server.recognizer.notice}\n`);
const stop = async () => {
  await demo.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
