import { parseArgs } from 'node:util';
import type { SupplementKind } from './domain/realtime-session.js';
import { isRecognizerError } from './recognition/errors.js';
import { RECOGNIZER_CHOICES, type RecognizerChoice } from './recognition/select.js';
import { startServer, type ServerOptions } from './server.js';

/**
 * `pnpm --filter @soundclone/server start -- --port 8787 --access-key dev-key [--access-key k2]
 *  [--host 127.0.0.1] [--allow-media-host HOST:PORT]` (the last is TEST-ONLY: lets exactly that
 * host:port through the mediaUrl/notifyUrl address policy). The first stdout line is the base URL.
 *
 * Realtime, for users testing their own apps: --rotate-every-ms N, --rotate-every-samples N,
 * --recovery-window-ms N, --heartbeat-interval-ms N, --heartbeat-timeout-ms N, --delay-acks-ms N,
 * --withhold-acks, --withhold-supplements KINDS (comma list of alignment,entities,revision,language, or
 * all), --delay-supplements-ms N, --retain-audio SECONDS (TEST-ONLY debug read of stored audio).
 *
 * --recognizer auto|pocketsphinx|deterministic: auto (the default here, unlike startServer's) uses
 * PocketSphinx when it is installed and says on stderr when it falls back to the deterministic one.
 * --max-decoders N: PocketSphinx streams at once (default 4, ~90 MB each); past it realtime sessions are
 * refused with 503 RECOGNIZER_BUSY (load tests with many sessions raise it).
 */
const SUPPLEMENT_KINDS: readonly SupplementKind[] = ['alignment', 'entities', 'revision', 'language'];

const NUMERIC = ['rotate-every-ms', 'rotate-every-samples', 'recovery-window-ms', 'heartbeat-interval-ms', 'heartbeat-timeout-ms', 'delay-acks-ms', 'delay-supplements-ms', 'retain-audio', 'max-decoders'] as const;

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== '--'),
    options: {
      port: { type: 'string', default: '8787' },
      host: { type: 'string', default: '127.0.0.1' },
      'access-key': { type: 'string', multiple: true },
      'allow-media-host': { type: 'string', multiple: true },
      'withhold-acks': { type: 'boolean', default: false },
      'withhold-supplements': { type: 'string' },
      recognizer: { type: 'string', default: 'auto' },
      ...Object.fromEntries(NUMERIC.map((name) => [name, { type: 'string' as const }])),
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help === true) {
    process.stdout.write(
      'usage: soundclone-server --port 8787 --access-key KEY [--access-key KEY2] [--host 127.0.0.1] [--allow-media-host HOST:PORT (test-only)]\n' +
        '  realtime: [--rotate-every-ms N] [--rotate-every-samples N] [--recovery-window-ms N] [--heartbeat-interval-ms N]\n' +
        '            [--heartbeat-timeout-ms N] [--delay-acks-ms N] [--withhold-acks] [--withhold-supplements KINDS|all]\n' +
        '            [--delay-supplements-ms N] [--retain-audio SECONDS (test-only)]\n' +
        '  recognition: [--recognizer auto|pocketsphinx|deterministic] (default auto: PocketSphinx when installed)\n' +
        '               [--max-decoders N] (PocketSphinx streams at once, default 4)\n',
    );
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
  const numbers: Partial<Record<(typeof NUMERIC)[number], number>> = {};
  for (const name of NUMERIC) {
    const raw = (values as Record<string, unknown>)[name];
    if (raw === undefined) continue;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value <= 0) {
      process.stderr.write(`error: --${name} takes a positive integer, got ${String(raw)}\n`);
      process.exitCode = 2;
      return;
    }
    numbers[name] = value;
  }
  const withheld = values['withhold-supplements'];
  const kinds = withheld === undefined ? undefined : withheld === 'all' ? [...SUPPLEMENT_KINDS] : withheld.split(',');
  const unknownKind = kinds?.find((k) => !(SUPPLEMENT_KINDS as readonly string[]).includes(k));
  if (unknownKind !== undefined) {
    process.stderr.write(`error: --withhold-supplements takes ${SUPPLEMENT_KINDS.join(',')} or all, got ${unknownKind}\n`);
    process.exitCode = 2;
    return;
  }
  const recognizer = values.recognizer as string;
  if (!(RECOGNIZER_CHOICES as readonly string[]).includes(recognizer)) {
    process.stderr.write(`error: --recognizer takes ${RECOGNIZER_CHOICES.join(', ')}, got ${recognizer}\n`);
    process.exitCode = 2;
    return;
  }
  const options: ServerOptions = {
    port,
    recognizer: recognizer as RecognizerChoice,
    host: values.host as string,
    accessKeys: keys,
    allowMediaHosts: allowed,
    realtimeTiming: {
      ...(numbers['rotate-every-ms'] !== undefined ? { rotateEveryMs: numbers['rotate-every-ms'] } : {}),
      ...(numbers['rotate-every-samples'] !== undefined ? { rotateEverySamples: numbers['rotate-every-samples'] } : {}),
      ...(numbers['recovery-window-ms'] !== undefined ? { recoveryWindowMs: numbers['recovery-window-ms'] } : {}),
    },
    socket: {
      ...(numbers['heartbeat-interval-ms'] !== undefined ? { heartbeatIntervalMs: numbers['heartbeat-interval-ms'] } : {}),
      ...(numbers['heartbeat-timeout-ms'] !== undefined ? { heartbeatTimeoutMs: numbers['heartbeat-timeout-ms'] } : {}),
    },
    ...(numbers['retain-audio'] !== undefined ? { retainRealtimeAudioSamples: numbers['retain-audio'] * 16_000 } : {}),
    ...(numbers['max-decoders'] !== undefined ? { pocketsphinx: { maxDecoders: numbers['max-decoders'] } } : {}),
  };
  let server;
  try {
    server = await startServer(options);
  } catch (error) {
    if (!isRecognizerError(error)) throw error;
    process.stderr.write(`error: ${error.message} [${error.code}]\n`);
    process.exitCode = 1;
    return;
  }
  if (server.recognizer.notice !== undefined) process.stderr.write(`${server.recognizer.notice}\n`);
  const socketFaults = server.faults.socket;
  if (values['withhold-acks'] === true) socketFaults.inject({ kind: 'withholdAcks' });
  else if (numbers['delay-acks-ms'] !== undefined) socketFaults.inject({ kind: 'delayAcks', ms: numbers['delay-acks-ms'] });
  if (kinds !== undefined) socketFaults.inject({ kind: 'withholdSupplements', kinds: kinds as SupplementKind[] });
  else if (numbers['delay-supplements-ms'] !== undefined) socketFaults.inject({ kind: 'delaySupplements', ms: numbers['delay-supplements-ms'] });
  process.stdout.write(`${server.url}\n`);
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
