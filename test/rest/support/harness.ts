import { startServer, type RunningServer, type ServerOptions } from '@soundclone/server';
import { SoundClone, type SoundCloneOptions } from '@soundclone/core';

/**
 * End-to-end harness: the reference server started in-process on 127.0.0.1:0 and clients talking to
 * it over real HTTP. Retry delays are shortened so fault tests stay fast; everything else is the
 * client as a user gets it.
 */
export const KEY_A = 'key-alpha';
export const KEY_B = 'key-beta';

export async function startTestServer(options: Partial<ServerOptions> = {}): Promise<RunningServer> {
  return startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY_A, KEY_B], ...options });
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
