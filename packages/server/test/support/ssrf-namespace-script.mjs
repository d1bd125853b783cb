// Runs INSIDE a private network namespace (`unshare -n`, only loopback up): starts the built server, a
// media host and a "victim" host on loopback, asks the server to fetch refused destinations, and prints
// one JSON report. Nothing here can leave the namespace even if the address guard were broken.
import { createServer } from 'node:http';
import { startServer } from '../../dist/index.js';

const PREFIX = '/sound_clone/api/v1';

function listen(host, handler) {
  return new Promise((resolve) => {
    const server = createServer(handler);
    server.listen(0, host, () => resolve(server));
  });
}

const victimHits = [];
const victim = await listen('::', (req, res) => {
  victimHits.push(req.url);
  res.writeHead(200, { 'Content-Type': 'audio/wav' }).end('RIFF');
});
const vp = victim.address().port;

const redirects = {
  metadata: 'http://169.254.169.254/latest/meta-data/',
  loopback: `http://127.0.0.1:${vp}/x`,
  localhost: `http://localhost:${vp}/x`,
  private: 'http://10.0.0.7/x',
  mapped: `http://[::ffff:127.0.0.1]:${vp}/x`,
  decimal: `http://2130706433:${vp}/x`,
};
const media = await listen('127.0.0.1', (req, res) => {
  const name = (req.url ?? '').replace('/redirect/', '');
  const target = redirects[name];
  if (target) res.writeHead(302, { Location: target }).end();
  else res.writeHead(404).end();
});
const mp = media.address().port;

const server = await startServer({
  accessKeys: ['ns-key'],
  allowMediaHosts: [`127.0.0.1:${mp}`],
  mediaFetchTimeoutMs: 3000,
  webhookRetryDelaysMs: [],
  // Names the real resolver cannot answer here resolve, for this test, to chosen refused addresses.
  resolveHost: async (name) => {
    const table = { 'private.test': '10.0.0.5', 'meta.test': '169.254.169.254', 'ula.test': 'fd12::1', 'mixed.test': '93.184.216.34' };
    if (name === 'mixed.test') return [{ address: '8.8.4.4', family: 4 }, { address: '127.0.0.1', family: 4 }];
    if (table[name]) return [{ address: table[name], family: table[name].includes(':') ? 6 : 4 }];
    const { lookup } = await import('node:dns/promises');
    return lookup(name, { all: true, verbatim: true });
  },
});

const refused = [
  `http://127.0.0.1:${vp}/x`,
  `http://2130706433:${vp}/x`,
  `http://0177.0.0.1:${vp}/x`,
  `http://0x7f000001:${vp}/x`,
  `http://0x7f.0.0.1:${vp}/x`,
  `http://127.1:${vp}/x`,
  `http://127.0.0.1.:${vp}/x`,
  `http://[::1]:${vp}/x`,
  `http://[::ffff:127.0.0.1]:${vp}/x`,
  `http://[::ffff:7f00:1]:${vp}/x`,
  `http://[0:0:0:0:0:ffff:127.0.0.1]:${vp}/x`,
  `http://[::127.0.0.1]:${vp}/x`,
  `http://[64:ff9b::127.0.0.1]:${vp}/x`,
  `http://[::ffff:0:7f00:1]:${vp}/x`,
  `http://[::ffff:0:127.0.0.1]:${vp}/x`,
  `http://[64:ff9b:1::7f00:1]:${vp}/x`,
  `http://[2002:7f00:1::1]:${vp}/x`,
  `http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:${vp}/x`,
  `http://localhost:${vp}/x`,
  `http://0.0.0.0:${vp}/x`,
  `http://0:${vp}/x`,
  'http://10.0.0.1/x',
  'http://172.16.5.4/x',
  'http://192.168.1.1/x',
  'http://100.64.0.1/x',
  'http://169.254.169.254/latest/meta-data/',
  'http://2852039166/latest/meta-data/',
  'http://0xa9fea9fe/latest/',
  'http://[::ffff:169.254.169.254]/latest/',
  'http://[fd00:ec2::254]/latest/',
  'http://[fe80::1]/x',
  'http://[fc00::1]/x',
  'http://[ff02::1]/x',
  'http://224.0.0.1/x',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://metadata.google.internal./computeMetadata/v1/',
  'http://private.test/x',
  'http://meta.test/x',
  'http://ula.test/x',
  'http://mixed.test/x',
  ...Object.keys(redirects).map((name) => `http://127.0.0.1:${mp}/redirect/${name}`),
];
const unreachable = ['http://11.22.33.44/a.wav', 'http://no-such-host.invalid/a.wav'];

async function create(mediaUrl, i) {
  const started = Date.now();
  const r = await fetch(`${server.url}${PREFIX}/stt/transcriptions`, {
    method: 'POST',
    headers: { accessKey: 'ns-key', 'Content-Type': 'application/json', 'Idempotency-Key': `ns-${i}` },
    body: JSON.stringify({ mediaUrl }),
  });
  const body = await r.json();
  return { mediaUrl, status: r.status, errorCode: body.errorCode, details: body.details, ms: Date.now() - started };
}

const results = [];
let i = 0;
for (const url of [...refused, ...unreachable]) results.push(await create(url, i++));

// notifyUrl goes through the same guard: a completed task's webhook to a refused address is not sent.
const wav = Buffer.alloc(44 + 3200);
wav.write('RIFF', 0, 'ascii'); wav.writeUInt32LE(36 + 3200, 4); wav.write('WAVEfmt ', 8, 'ascii');
wav.writeUInt32LE(16, 16); wav.writeUInt16LE(1, 20); wav.writeUInt16LE(1, 22); wav.writeUInt32LE(16000, 24);
wav.writeUInt32LE(32000, 28); wav.writeUInt16LE(2, 32); wav.writeUInt16LE(16, 34); wav.write('data', 36, 'ascii'); wav.writeUInt32LE(3200, 40);
const up = await (await fetch(`${server.url}${PREFIX}/uploads`, { method: 'POST', headers: { accessKey: 'ns-key', 'Content-Type': 'audio/wav' }, body: wav })).json();
// A literal refused address is refused at submit (INPUT_INVALID, details.reason DESTINATION_NOT_ALLOWED);
// a host name is judged when the webhook connects, on the addresses it resolves to.
const literalHooks = [`http://127.0.0.1:${vp}/hook`, 'http://169.254.169.254/hook', 'http://[::ffff:10.0.0.1]/hook', 'http://10.1.2.3/hook', 'http://[::1]/'];
const namedHooks = [`http://localhost:${vp}/hook`, 'http://metadata.google.internal/hook'];
const submitRefusals = [];
for (const notifyUrl of [...literalHooks, ...namedHooks]) {
  const r = await fetch(`${server.url}${PREFIX}/stt/transcriptions`, {
    method: 'POST',
    headers: { accessKey: 'ns-key', 'Content-Type': 'application/json', 'Idempotency-Key': `hook-${notifyUrl}` },
    body: JSON.stringify({ uploadId: up.data.uploadId, waitForCompletion: true, options: { notifyUrl } }),
  });
  const body = await r.json();
  if (literalHooks.includes(notifyUrl)) submitRefusals.push({ notifyUrl, status: r.status, errorCode: body.errorCode, reason: body.details?.reason });
}
await new Promise((r) => setTimeout(r, 200));
const deliveries = (await server.services.store.outbox.list()).map((d) => ({ url: d.url, outcome: d.outcome, attempts: d.attempts.length }));

await server.close();
victim.close();
media.close();
process.stdout.write(JSON.stringify({ refusedCount: refused.length, results, victimHits, deliveries, submitRefusals }));
