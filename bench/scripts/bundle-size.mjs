// What a browser page pays to "connect a session and stream a worklet": bundles the README's
// usage of @soundclone/web-audio (attachSession + startCapture, one subscription) from the packages'
// built dist/, as an application bundler would, minified, and reports raw and gzipped bytes plus the
// largest inputs. Run after `pnpm build`:
//
//   node bench/scripts/bundle-size.mjs [workspace root]     (default: this workspace)
//
// Passing another checkout's root measures that build with the same entry, for before/after tables.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
// esbuild comes from web-audio, which builds its worklet with it: the bench adds no dependency for this.
const { build } = createRequire(join(here, '..', '..', 'packages', 'web-audio', 'package.json'))('esbuild');
const root = resolve(process.argv[2] ?? join(here, '..', '..'));
const webAudio = join(root, 'packages', 'web-audio', 'dist', 'index.js');

// The page: attach to a session the backend created, capture the microphone through the worklet,
// show committed lines. The worklet itself is a separate artifact loaded by URL; its own size is
// reported beside the page bundle.
const entry = `
  import { attachSession, startCapture } from ${JSON.stringify(webAudio)};
  const grant = await (await fetch('/api/session', { method: 'POST' })).json();
  const session = await attachSession(grant);
  const capture = await startCapture({ session });
  capture.lines$.subscribe((line) => console.log(line.text));
  await capture.stop();
  await session.finish();
`;

// The same without the adapter: core alone, attached by token, lines heard through the \`line\` event
// (no Observable used), raw Float32 written, then finished.
const coreEntry = `
  import { SoundClone } from ${JSON.stringify(join(root, 'packages', 'core', 'dist', 'index.js'))};
  const { sessionId, token } = await (await fetch('/api/session', { method: 'POST' })).json();
  const session = await new SoundClone({ apiKey: 'unused-in-the-browser' }).stt.realtime.attach({ sessionId, token });
  session.on('line', (line) => console.log(line.text));
  session.write(new Float32Array(960));
  await session.finish();
`;

const dir = mkdtempSync(join(tmpdir(), 'soundclone-bundle-'));
try {
  const file = join(dir, 'page.mjs');
  writeFileSync(file, entry);
  const options = {
    entryPoints: [file], bundle: true, format: 'esm', platform: 'browser', target: 'es2022',
    minify: true, write: false, metafile: true, legalComments: 'none', logLevel: 'silent',
  };
  const result = await build(options);
  const code = result.outputFiles[0].contents;
  // The same page with rxjs left out: what the Observable views cost a page that never subscribes.
  const withoutRx = (await build({ ...options, external: ['rxjs'] })).outputFiles[0].contents;
  const worklet = Buffer.from((await import(join(root, 'packages', 'web-audio', 'dist', 'capture-worklet-source.js'))).default);
  const out = Object.values(result.metafile.outputs)[0];
  // Bytes each package contributes to the minified output (before gzip), largest first.
  const byPackage = new Map();
  for (const [input, { bytesInOutput }] of Object.entries(out.inputs)) {
    const dep = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(input);
    const own = /packages\/([^/]+)\//.exec(input);
    const key = dep ? dep[1] : own ? `@soundclone/${own[1]}` : 'page';
    byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput);
  }
  const coreFile = join(dir, 'core-page.mjs');
  writeFileSync(coreFile, coreEntry);
  const coreCode = (await build({ ...options, entryPoints: [coreFile] })).outputFiles[0].contents;
  const coreWithoutRx = (await build({ ...options, entryPoints: [coreFile], external: ['rxjs'] })).outputFiles[0].contents;
  const report = {
    root,
    coreOnlyMinified: coreCode.length,
    coreOnlyGzip: gzipSync(coreCode, { level: 9 }).length,
    coreOnlyRxjsGzip: gzipSync(coreCode, { level: 9 }).length - gzipSync(coreWithoutRx, { level: 9 }).length,
    pageMinified: code.length,
    pageGzip: gzipSync(code, { level: 9 }).length,
    rxjsGzip: gzipSync(code, { level: 9 }).length - gzipSync(withoutRx, { level: 9 }).length,
    workletBytes: worklet.length,
    workletGzip: gzipSync(worklet, { level: 9 }).length,
    byPackage: Object.fromEntries([...byPackage].sort((a, b) => b[1] - a[1])),
  };
  console.log(JSON.stringify(report, null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
