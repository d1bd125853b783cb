import { startServer, type RunningServer, type ServerOptions } from '@soundclone/server';
import { SoundClone, type SoundCloneOptions } from '@soundclone/core';
import { startTestCluster } from './cluster.js';

/**
 * End-to-end harness: the reference server started in-process on 127.0.0.1:0 and clients talking to
 * it over real HTTP. Retry delays are shortened so fault tests stay fast; everything else is the
 * client as a user gets it.
 *
 * With SOUNDCLONE_TEST_TARGET=cluster (vitest.config.ts project `rest-cluster`) every server is a
 * cluster instead: three nodes over one PostgreSQL behind haproxy, round robin (cluster.ts). Tests that
 * cannot run there say so with `singleNodeOnly(reason)` or `awaitsOnCluster(gaps, reason)`.
 */
export const KEY_A = 'key-alpha';
export const KEY_B = 'key-beta';

/** The suite runs against a cluster behind a balancer. */
export const ON_CLUSTER = process.env['SOUNDCLONE_TEST_TARGET'] === 'cluster';

export async function startTestServer(options: Partial<ServerOptions> = {}): Promise<RunningServer> {
  if (ON_CLUSTER) return startTestCluster({ accessKeys: [KEY_A, KEY_B], ...options });
  return startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY_A, KEY_B], ...options });
}

/**
 * For `describe.skipIf` / `it.skipIf`: true on the cluster, where the test cannot mean what it says
 * (`reason` names why; it is the record of the exception, read it before adding one).
 */
export function singleNodeOnly(reason: string): boolean {
  return ON_CLUSTER && reason.length > 0;
}

export function clientFor(server: { url: string }, options: Partial<SoundCloneOptions> = {}): SoundClone {
  return new SoundClone({
    accessKey: KEY_A,
    baseUrl: server.url,
    retryDelay: { baseMs: 20, maxMs: 100 },
    ...options,
  });
}

/** Requests the server logged for a method and path suffix since `from` (an index into server.requests). */
export function requestsTo(server: RunningServer, method: string, pathSuffix: string | RegExp, from = 0): RunningServer['requests'] {
  return server.requests.slice(from).filter((r) => r.method === method && (typeof pathSuffix === 'string' ? r.path.endsWith(pathSuffix) : pathSuffix.test(r.path)));
}

/** Captures a rejection as a value so tests can assert on its class and fields. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}
