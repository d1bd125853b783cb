import { afterAll, beforeAll } from 'vitest';
import { LocalRedis } from '../../src/cluster/local-redis.js';

/**
 * One Redis server per test file that uses it (a fresh `redis-server` on a free loopback port, nothing
 * saved to disk), stopped after the file's tests. Tests sharing it keep apart by their session ids.
 */
export function redisForFile(): { readonly server: LocalRedis; readonly url: string } {
  let current: LocalRedis | undefined;
  beforeAll(async () => {
    current = await LocalRedis.start();
  });
  afterAll(async () => {
    await current?.stop();
    current = undefined;
  });
  const running = (): LocalRedis => {
    if (current === undefined) throw new Error('the test Redis runs only during the file\'s tests and hooks');
    return current;
  };
  return {
    get server() {
      return running();
    },
    get url() {
      return running().url;
    },
  };
}
