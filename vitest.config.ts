import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests import the workspace packages by name; point those names at the TypeScript sources so a
// test run never depends on a stale dist/. The packed-artifact smoke test checks the built output.
const src = (pkg: string): string => fileURLToPath(new URL(`./packages/${pkg}/src/`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@soundclone\/(core|node-mic|web-audio|server|cli|testing|react|vue|svelte)$/, replacement: `${src('$1')}index.ts` },
      // The subpaths of the packages' "exports": core's ./internal and ./rx, web-audio's ./rx. web-audio's
      // ./worklet files are built bundles, imported from dist.
      { find: /^@soundclone\/core\/internal$/, replacement: `${src('core')}internal.ts` },
      { find: /^@soundclone\/(core|web-audio)\/rx$/, replacement: `${src('$1')}rx.ts` },
    ],
  },
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      // (`include` lives in each project: a project extending the root would add to the root's.)
      { extends: true, test: { name: 'default', include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'] } },
      // The REST end-to-end suite again, every server a cluster: three nodes over one PostgreSQL behind
      // haproxy (test/rest/support/cluster.ts). About a minute on two cores.
      {
        extends: true,
        test: {
          name: 'rest-cluster',
          include: ['test/rest/**/*.test.ts'],
          env: { SOUNDCLONE_TEST_TARGET: 'cluster' },
          globalSetup: ['test/rest/support/cluster-setup.ts'],
        },
      },
    ],
  },
});
