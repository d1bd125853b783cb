import { parseArgs } from 'node:util';
import { startServer } from './server.js';

/**
 * `pnpm --filter @soundclone/server start -- --port 8787 --access-key dev-key [--access-key k2]
 *  [--host 127.0.0.1] [--allow-media-host HOST:PORT]` (the last is TEST-ONLY: lets exactly that
 * host:port through the mediaUrl/notifyUrl address policy). The first stdout line is the base URL.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== '--'),
    options: {
      port: { type: 'string', default: '8787' },
      host: { type: 'string', default: '127.0.0.1' },
      'access-key': { type: 'string', multiple: true },
      'allow-media-host': { type: 'string', multiple: true },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help === true) {
    process.stdout.write('usage: soundclone-server --port 8787 --access-key KEY [--access-key KEY2] [--host 127.0.0.1] [--allow-media-host HOST:PORT (test-only)]\n');
    return;
  }
  const keys = values['access-key'] ?? [];
  const port = Number(values.port);
  if (keys.length === 0 || !Number.isInteger(port) || port < 0 || port > 65_535) {
    process.stderr.write('error: give --port 0..65535 and at least one --access-key\n');
    process.exitCode = 2;
    return;
  }
  const allowed = values['allow-media-host'] ?? [];
  const bad = allowed.find((h) => !/^(\[[0-9a-fA-F:.]+\]|[^:\s/]+):\d{1,5}$/.test(h));
  if (bad !== undefined) {
    process.stderr.write(`error: --allow-media-host takes HOST:PORT (IPv6 as [::1]:PORT), got ${bad}\n`);
    process.exitCode = 2;
    return;
  }
  const server = await startServer({ port, host: values.host as string, accessKeys: keys, allowMediaHosts: allowed });
  process.stdout.write(`${server.url}\n`);
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
