// The pages whose weight the bundle bench reports and the page-weight test holds to a ceiling: each
// is what an application's entry imports, bundled as an application's bundler would (esbuild,
// platform browser, ES2022, minified; gzip level 9). One list, so the table and the test measure the
// same pages.
//
// `from: 'dist'` bundles the packages' built output (the bench, after `pnpm build`); `from: 'src'`
// their TypeScript sources (the test, which never depends on a stale dist/).
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
export const WORKSPACE = resolve(here, '..', '..');

/**
 * Each page: `ceiling` is the gzipped size the page-weight test enforces now (a change that grows a
 * page past it fails the build); `target` is where the page should get to (null: no target of its
 * own). `forbid` names what the page must not contain at all, by module path.
 */
export const PAGES = [
  {
    id: 'core-token',
    label: 'Core by token: `new RealtimeSocketSession({ sessionId, token, socketUrl })`, `line` event, `write`, `finish`',
    entry: `
      import { RealtimeSocketSession } from '@soundclone/core';
      const { sessionId, token, socketUrl } = await (await fetch('/api/session', { method: 'POST' })).json();
      const session = await new RealtimeSocketSession({ sessionId, token, socketUrl }).start();
      session.on('line', (line) => console.log(line.text));
      session.write(new Float32Array(960));
      await session.finish();
    `,
    forbid: ['rest-client', 'rxjs'],
    ceiling: 37_100,
    target: null,
  },
  {
    id: 'web-audio-capture',
    label: 'Page: `attachSession` + `startCapture` (web-audio), `line` event',
    entry: `
      import { attachSession, startCapture } from '@soundclone/web-audio';
      const grant = await (await fetch('/api/session', { method: 'POST' })).json();
      const session = await attachSession(grant);
      session.on('line', (line) => console.log(line.text));
      const capture = await startCapture({ session });
      await capture.stop();
      await session.finish();
    `,
    forbid: ['rest-client', 'rxjs'],
    ceiling: 51_300,
    target: 20_000,
  },
  {
    id: 'web-audio-rx',
    label: 'Page: `attachSession` + `startCapture` (web-audio), `lines$` of `captureStreams` (`@soundclone/web-audio/rx`) subscribed',
    entry: `
      import { attachSession, startCapture } from '@soundclone/web-audio';
      import { captureStreams } from '@soundclone/web-audio/rx';
      const grant = await (await fetch('/api/session', { method: 'POST' })).json();
      const session = await attachSession(grant);
      const capture = await startCapture({ session });
      captureStreams(capture).lines$.subscribe((line) => console.log(line.text));
      await capture.stop();
      await session.finish();
    `,
    forbid: ['rest-client'],
    ceiling: 54_300,
    target: 20_000,
  },
  {
    id: 'live-captions',
    label: 'Page: `createLiveCaptions` (web-audio) with token credentials, started, `lines` rendered from snapshots',
    entry: `
      import { createLiveCaptions } from '@soundclone/web-audio';
      const captions = createLiveCaptions({
        credentials: async ({ reason, sessionId }) => (await fetch(reason === 'connect' ? '/api/session' : '/api/session/' + sessionId + '/token', { method: 'POST' })).json(),
      });
      captions.subscribe(() => { document.body.textContent = captions.getSnapshot().lines.map((l) => l.text).join('\\n'); });
      await captions.start();
    `,
    forbid: ['rest-client', 'rxjs'],
    ceiling: 56_100,
    target: 20_000,
  },
  {
    id: 'react',
    label: 'React page: `useLiveCaptions` (@soundclone/react), lines rendered; react and react-dom not counted (the app has them)',
    entry: `
      import { createElement as h } from 'react';
      import { createRoot } from 'react-dom/client';
      import { useLiveCaptions } from '@soundclone/react';
      const credentials = async ({ reason, sessionId }) => (await fetch(reason === 'connect' ? '/api/session' : '/api/session/' + sessionId + '/token', { method: 'POST' })).json();
      function Captions() {
        const c = useLiveCaptions({ credentials, autoStart: true });
        return h('div', null, c.lines.map((l) => h('p', { key: l.id }, l.text)), h('i', null, c.partial));
      }
      createRoot(document.body).render(h(Captions));
    `,
    external: ['react', 'react-dom', 'react-dom/client'],
    forbid: ['rest-client', 'rxjs'],
    ceiling: 56_400,
    target: 20_000,
  },
  {
    id: 'vue',
    label: 'Vue page: `useLiveCaptions` (@soundclone/vue), lines rendered; vue not counted',
    entry: `
      import { createApp, defineComponent, h } from 'vue';
      import { useLiveCaptions } from '@soundclone/vue';
      const credentials = async ({ reason, sessionId }) => (await fetch(reason === 'connect' ? '/api/session' : '/api/session/' + sessionId + '/token', { method: 'POST' })).json();
      const Captions = defineComponent(() => {
        const { snapshot } = useLiveCaptions({ credentials, autoStart: true });
        return () => h('div', null, [...snapshot.value.lines.map((l) => h('p', { key: l.id }, l.text)), h('i', null, snapshot.value.partial)]);
      });
      createApp(Captions).mount(document.body);
    `,
    external: ['vue'],
    forbid: ['rest-client', 'rxjs'],
    ceiling: 56_400,
    target: 20_000,
  },
  {
    id: 'svelte',
    label: 'Svelte page: `liveCaptions` (@soundclone/svelte) subscribed, lines rendered; svelte not counted',
    entry: `
      import { liveCaptions } from '@soundclone/svelte';
      const credentials = async ({ reason, sessionId }) => (await fetch(reason === 'connect' ? '/api/session' : '/api/session/' + sessionId + '/token', { method: 'POST' })).json();
      const captions = liveCaptions({ credentials, autoStart: true });
      captions.subscribe((s) => { document.body.textContent = s.lines.map((l) => l.text).join('\\n') + s.partial; });
    `,
    external: [],
    forbid: ['rest-client', 'rxjs'],
    ceiling: 56_300,
    target: 20_000,
  },
  {
    id: 'core-client',
    label: 'Core with the REST client: `new SoundClone().stt.realtime.attach`, `line` event, `write`',
    entry: `
      import { SoundClone } from '@soundclone/core';
      const { sessionId, token } = await (await fetch('/api/session', { method: 'POST' })).json();
      const session = await new SoundClone({ apiKey: 'unused-in-the-browser' }).stt.realtime.attach({ sessionId, token });
      session.on('line', (line) => console.log(line.text));
      session.write(new Float32Array(960));
      await session.finish();
    `,
    forbid: ['rxjs'],
    ceiling: 53_500,
    target: null,
  },
];

/** Module paths that make up what a page must not contain. */
const FORBIDDEN = {
  // The REST client: its resources and its one HTTP transport.
  'rest-client': (path) => /packages\/core\/(src|dist)\/(client|http)\//.test(path),
  rxjs: (path) => /(^|\/)node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?rxjs\//.test(path),
};

/** esbuild, from web-audio (which builds its worklet with it): the bench adds no dependency for this. */
function esbuild(root) {
  return createRequire(join(root, 'packages', 'web-audio', 'package.json'))('esbuild');
}

function aliases(root, from) {
  const dir = (pkg) => join(root, 'packages', pkg, from);
  return Object.fromEntries(['core', 'web-audio', 'react', 'vue', 'svelte'].map((pkg) => [`@soundclone/${pkg}`, dir(pkg)]));
}

/**
 * Bundles one page and measures it: minified and gzipped bytes, the gzipped bytes rxjs adds (the
 * same page with rxjs left out), minified bytes by package, and every module that went in.
 */
export async function measurePage(page, { root = WORKSPACE, from = 'dist' } = {}) {
  const { build } = esbuild(root);
  const dir = mkdtempSync(join(tmpdir(), 'soundclone-bundle-'));
  try {
    const file = join(dir, `${page.id}.mjs`);
    writeFileSync(file, page.entry);
    const options = {
      entryPoints: [file], bundle: true, format: 'esm', platform: 'browser', target: 'es2022',
      minify: true, write: false, metafile: true, legalComments: 'none', logLevel: 'silent',
      alias: aliases(root, from), external: page.external ?? [], nodePaths: [join(root, 'packages', 'web-audio', 'node_modules'), join(root, 'node_modules')],
    };
    const result = await build(options);
    const code = result.outputFiles[0].contents;
    const withoutRx = (await build({ ...options, metafile: false, external: [...options.external, 'rxjs'] })).outputFiles[0].contents;
    const out = Object.values(result.metafile.outputs)[0];
    const inputs = Object.entries(out.inputs).filter(([, v]) => v.bytesInOutput > 0).map(([path]) => path.replaceAll('\\', '/'));
    const byPackage = new Map();
    for (const [input, { bytesInOutput }] of Object.entries(out.inputs)) {
      const dep = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(input);
      const own = /packages\/([^/]+)\//.exec(input);
      const key = dep ? dep[1] : own ? `@soundclone/${own[1]}` : 'page';
      byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput);
    }
    const gzip = gzipSync(code, { level: 9 }).length;
    return {
      id: page.id,
      minified: code.length,
      gzip,
      rxjsGzip: gzip - gzipSync(withoutRx, { level: 9 }).length,
      byPackage: Object.fromEntries([...byPackage].sort((a, b) => b[1] - a[1])),
      inputs,
      forbidden: Object.fromEntries(page.forbid.map((kind) => [kind, inputs.filter(FORBIDDEN[kind])])),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The capture worklet as it ships (a separate artifact, loaded by URL): its bytes and gzipped bytes. */
export async function measureWorklet({ root = WORKSPACE } = {}) {
  const { bundleWorklet } = await import(join(root, 'packages', 'web-audio', 'scripts', 'build-worklet.mjs'));
  const code = Buffer.from(await bundleWorklet());
  return { bytes: code.length, gzip: gzipSync(code, { level: 9 }).length, ceiling: 8_100, target: 8_000 };
}

/** The framework bindings: each one's own bytes, web-audio and the framework left out (the page rows count them). */
export const ADAPTERS = [
  { id: 'react', external: ['react'], ceiling: 1_500 },
  { id: 'vue', external: ['vue'], ceiling: 1_500 },
  { id: 'svelte', external: [], ceiling: 1_500 },
];

export async function measureAdapter(adapter, { root = WORKSPACE, from = 'dist' } = {}) {
  const { build } = esbuild(root);
  const result = await build({
    stdin: { contents: `export * from '@soundclone/${adapter.id}';`, resolveDir: root, loader: 'js' },
    bundle: true, format: 'esm', platform: 'browser', target: 'es2022', minify: true, write: false, legalComments: 'none', logLevel: 'silent',
    alias: { [`@soundclone/${adapter.id}`]: aliases(root, from)[`@soundclone/${adapter.id}`] }, external: [...adapter.external, '@soundclone/web-audio'],
  });
  const code = result.outputFiles[0].contents;
  return { id: adapter.id, minified: code.length, gzip: gzipSync(code, { level: 9 }).length };
}
