import { createServer } from 'node:net';

/**
 * A port of 127.0.0.1 that nothing listens on right now (the kernel's pick for port 0, released
 * again). Another program may take it before the caller binds it; the callers here start their
 * program at once and report a failed bind as a failed start.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
