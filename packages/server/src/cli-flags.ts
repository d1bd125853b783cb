import { parseArgs } from 'node:util';
import type { SupplementKind } from './realtime/session/audio.js';
import type { SocketFaultRule } from './realtime/socket/faults.js';
import { RECOGNIZER_CHOICES, type RecognizerChoice } from './recognition/select.js';
import { normalizePublicUrl } from './public-url.js';
import { NODES } from './protocol.js';
import type { ServerOptions } from './server.js';
import { checkRedisUrl } from './live/live-error.js';

/**
 * The reference server's command-line flags, parsed into startServer options, so any CLI that starts
 * the server (ours, `soundclone-server`, or another) accepts exactly the same flags with the same
 * checks and the same usage text.
 *
 *   argv --parseServerFlags--> { help, options, socketFaults }
 *        startServer(options) --> for each rule of socketFaults: server.faults.socket.inject(rule)
 *
 * Flags: --port N (default 8787), --host H (default 127.0.0.1), --access-key KEY (one or more,
 * required), --allow-media-host HOST:PORT (TEST-ONLY: lets exactly that host:port through the
 * mediaUrl/notifyUrl address policy). Realtime: --rotate-every-ms N, --rotate-every-samples N,
 * --recovery-window-ms N, --abandon-after-ms N (a session with no socket and no finish this long after
 * its recovery window passed is finished by the service, PARTIAL; default 300,000), --heartbeat-interval-ms N, --heartbeat-timeout-ms N, --delay-acks-ms N,
 * --socket-lifetime-ms N (each socket is recycled with close 4002 after N ms, told beforehand),
 * --withhold-acks, --withhold-supplements KINDS (comma list of alignment,entities,revision,language, or
 * all), --delay-supplements-ms N, --retain-audio SECONDS (TEST-ONLY debug read of stored audio).
 * --recognizer auto|pocketsphinx|deterministic: auto (the default here, unlike startServer's) uses
 * PocketSphinx when it is installed. --max-decoders N: PocketSphinx streams at once (default 4, ~90 MB
 * each); past it realtime sessions are refused with 503 RECOGNIZER_BUSY. --data-dir DIR: keep the state
 * there across restarts (startServer dataDir; default: in memory only). --database-url URL: keep it in
 * PostgreSQL instead (startServer databaseUrl; the server's own command also reads
 * SOUNDCLONE_DATABASE_URL); one of the two at most. --redis-url URL (or SOUNDCLONE_REDIS_URL): live
 * realtime sessions in Redis so they survive their node (startServer redisUrl; needs a database URL). --upload-quota-bytes N: media
 * bytes one account may hold (uploads until deleted, fetched media while its task runs; default 512 MiB);
 * past it 413 STORAGE_QUOTA_EXCEEDED. Per-account fairness:
 * --max-decoders-per-account N (default: all but a quarter of --max-decoders) and
 * --max-sessions-per-account N (realtime sessions open at once, default 8); past either, 429.
 * --max-sessions-per-node N: realtime sessions this server keeps live at once, every account's (default
 * 1,000); past it 503 NODE_FULL, which a retry through the balancer takes to another node.
 * --public-url URL: the address clients reach the service at behind a balancer or proxy (startServer
 * publicUrl; the socket URLs it hands out use it; default the listen address). Several nodes on one
 * database (docs/protocol.md "Several nodes"): --internal-url URL (where the other nodes reach this one,
 * default its listen address), --node-id ID (default random), --drain-grace-ms N (on SIGTERM, how long
 * GET /health answers 503 before the node closes, default 2,000), --drain-timeout-ms N (past it the
 * process exits anyway, default 15,000).
 * TEST-ONLY, not a flag: SOUNDCLONE_TEST_TASK_PROCESSING_MS in `env` holds every batch task PROCESSING
 * that long (startServer taskTiming.processingMs).
 */

export const SERVER_USAGE =
  'usage: soundclone-server --port 8787 --access-key KEY [--access-key KEY2] [--host 127.0.0.1] [--allow-media-host HOST:PORT (test-only)]\n' +
  '  realtime: [--rotate-every-ms N] [--rotate-every-samples N] [--recovery-window-ms N] [--heartbeat-interval-ms N]\n' +
  '            [--heartbeat-timeout-ms N] [--delay-acks-ms N] [--withhold-acks] [--withhold-supplements KINDS|all]\n' +
  '            [--delay-supplements-ms N] [--socket-lifetime-ms N] [--retain-audio SECONDS (test-only)]\n' +
  '            [--abandon-after-ms N] (no socket and no finish this long after the recovery window: ended PARTIAL, default 300000)\n' +
  '            [--max-sessions-per-node N] (realtime sessions live on this server at once, default 1000; past it 503 NODE_FULL)\n' +
  '  recognition: [--recognizer auto|pocketsphinx|deterministic] (default auto: PocketSphinx when installed)\n' +
  '               [--max-decoders N] (PocketSphinx streams at once, default 4)\n' +
  '  per account: [--max-decoders-per-account N] (default: max-decoders minus a quarter, 3 of 4)\n' +
  '               [--max-sessions-per-account N] (realtime sessions open at once, default 8)\n' +
  '  state: [--data-dir DIR] (keep accounts, voices and transcriptions there across restarts; default in memory)\n' +
  '         [--database-url postgres://...] (keep them in PostgreSQL instead; or SOUNDCLONE_DATABASE_URL)\n' +
  '         [--redis-url redis://...] (live realtime sessions in Redis: they survive their node; needs --database-url; or SOUNDCLONE_REDIS_URL)\n' +
  '  nodes: [--public-url URL] (where clients reach the service: the balancer) [--internal-url URL] (where other nodes reach this one)\n' +
  '         [--node-id ID] [--drain-grace-ms N] (SIGTERM: /health 503 this long before closing, default 2000)\n' +
  '         [--drain-timeout-ms N] (SIGTERM: exit after this long at most, default 15000)\n' +
  '  media: [--upload-quota-bytes N] (media bytes one account may hold, default 536870912)\n';

const SUPPLEMENT_KINDS: readonly SupplementKind[] = ['alignment', 'entities', 'revision', 'language'];

const NUMERIC = [
  'rotate-every-ms', 'rotate-every-samples', 'recovery-window-ms', 'heartbeat-interval-ms', 'heartbeat-timeout-ms', 'delay-acks-ms',
  'delay-supplements-ms', 'socket-lifetime-ms', 'retain-audio', 'max-decoders', 'upload-quota-bytes', 'max-decoders-per-account', 'max-sessions-per-account',
  'max-sessions-per-node', 'abandon-after-ms',
  'drain-grace-ms', 'drain-timeout-ms',
] as const;

/**
 * The flags as a `node:util` parseArgs option table, for a CLI that parses its own flags and the
 * server's in one pass (then hands the server's values to parseServerFlags as argv, or simply passes
 * its argv through). `help` is included.
 */
export const SERVER_FLAG_OPTIONS = {
  port: { type: 'string', default: '8787' },
  host: { type: 'string', default: '127.0.0.1' },
  'access-key': { type: 'string', multiple: true },
  'allow-media-host': { type: 'string', multiple: true },
  'withhold-acks': { type: 'boolean', default: false },
  'withhold-supplements': { type: 'string' },
  recognizer: { type: 'string', default: 'auto' },
  'data-dir': { type: 'string' },
  'public-url': { type: 'string' },
  'database-url': { type: 'string' },
  'redis-url': { type: 'string' },
  'internal-url': { type: 'string' },
  'node-id': { type: 'string' },
  ...(Object.fromEntries(NUMERIC.map((name) => [name, { type: 'string' }])) as Record<(typeof NUMERIC)[number], { type: 'string' }>),
  help: { type: 'boolean', default: false },
} as const;

/** A flag the server does not know, or a value it refuses; the message names the flag. */
export class ServerFlagError extends Error {
  override readonly name = 'ServerFlagError';
  readonly code = 'INVALID_SERVER_FLAG' as const;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export function isServerFlagError(value: unknown): value is ServerFlagError {
  return value instanceof ServerFlagError || (value instanceof Error && value.name === 'ServerFlagError');
}

export interface ServerFlags {
  /** --help was given: print SERVER_USAGE and start nothing (options are still the defaults' result). */
  readonly help: boolean;
  /** What to pass to startServer. */
  readonly options: ServerOptions;
  /** Socket faults the flags asked for; inject each into `server.faults.socket` once started. */
  readonly socketFaults: readonly SocketFaultRule[];
  /** SIGTERM drain: /health 503 for graceMs, then close; exit after timeoutMs at most. */
  readonly drain: { readonly graceMs: number; readonly timeoutMs: number };
}

/**
 * Parses the server's flags (argv without the node and script entries; a lone `--` is ignored).
 * Throws ServerFlagError for an unknown flag or a refused value. With --help the access key is not
 * required. `env` (the server's own command passes process.env) supplies SOUNDCLONE_DATABASE_URL when
 * --database-url is not given.
 */
export function parseServerFlags(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = {}): ServerFlags {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ args: argv.filter((a) => a !== '--'), options: SERVER_FLAG_OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new ServerFlagError(error instanceof Error ? error.message : String(error), { cause: error });
  }
  const help = values['help'] === true;
  const keys = (values['access-key'] as string[] | undefined) ?? [];
  const port = Number(values['port']);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ServerFlagError(`--port takes 0..65535, got ${String(values['port'])}`);
  if (keys.length === 0 && !help) throw new ServerFlagError('give at least one --access-key');
  const allowed = (values['allow-media-host'] as string[] | undefined) ?? [];
  const bad = allowed.find((h) => !/^(\[[0-9a-fA-F:.]+\]|[^:\s/]+):\d{1,5}$/.test(h));
  if (bad !== undefined) throw new ServerFlagError(`--allow-media-host takes HOST:PORT (IPv6 as [::1]:PORT), got ${bad}`);
  const numbers: Partial<Record<(typeof NUMERIC)[number], number>> = {};
  for (const name of NUMERIC) {
    const raw = values[name];
    if (raw === undefined) continue;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value <= 0) throw new ServerFlagError(`--${name} takes a positive integer, got ${String(raw)}`);
    numbers[name] = value;
  }
  const withheld = values['withhold-supplements'] as string | undefined;
  const kinds = withheld === undefined ? undefined : withheld === 'all' ? [...SUPPLEMENT_KINDS] : withheld.split(',');
  const unknownKind = kinds?.find((k) => !(SUPPLEMENT_KINDS as readonly string[]).includes(k));
  if (unknownKind !== undefined) throw new ServerFlagError(`--withhold-supplements takes ${SUPPLEMENT_KINDS.join(',')} or all, got ${unknownKind}`);
  const recognizer = values['recognizer'] as string;
  if (!(RECOGNIZER_CHOICES as readonly string[]).includes(recognizer)) {
    throw new ServerFlagError(`--recognizer takes ${RECOGNIZER_CHOICES.join(', ')}, got ${recognizer}`);
  }

  const dataDir = values['data-dir'] as string | undefined;
  if (dataDir !== undefined && dataDir.trim() === '') throw new ServerFlagError('--data-dir takes a directory path');
  const databaseUrl = databaseUrlOf(values['database-url'] as string | undefined, env['SOUNDCLONE_DATABASE_URL']);
  if (dataDir !== undefined && databaseUrl !== undefined) {
    const given = values['database-url'] !== undefined ? '--database-url' : 'SOUNDCLONE_DATABASE_URL (set in the environment)';
    throw new ServerFlagError(`--data-dir and ${given} are mutually exclusive: the state is kept in one place, a directory or PostgreSQL`);
  }

  const rawRedis = (values['redis-url'] as string | undefined) ?? (env['SOUNDCLONE_REDIS_URL'] !== undefined && env['SOUNDCLONE_REDIS_URL'].trim() !== '' ? env['SOUNDCLONE_REDIS_URL'] : undefined);
  const redisName = values['redis-url'] !== undefined ? '--redis-url' : 'SOUNDCLONE_REDIS_URL';
  let redisUrl: string | undefined;
  try {
    redisUrl = rawRedis === undefined ? undefined : checkRedisUrl(rawRedis);
  } catch (error) {
    throw new ServerFlagError(`${redisName}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (redisUrl !== undefined && databaseUrl === undefined) {
    throw new ServerFlagError(`${redisName} needs --database-url (or SOUNDCLONE_DATABASE_URL): Redis holds what a realtime session is doing now, the database what it did and what it costs`);
  }

  // TEST-ONLY, from the environment and not a flag: how long each batch task stays PROCESSING (ms), so a
  // test can kill a server process while it runs a task (startServer taskTiming.processingMs).
  const rawProcessing = env['SOUNDCLONE_TEST_TASK_PROCESSING_MS'];
  const processingMs = rawProcessing === undefined || rawProcessing === '' ? undefined : Number(rawProcessing);
  if (processingMs !== undefined && (!Number.isSafeInteger(processingMs) || processingMs < 0)) {
    throw new ServerFlagError(`SOUNDCLONE_TEST_TASK_PROCESSING_MS takes a whole number of milliseconds, got ${rawProcessing}`);
  }

  const rawPublicUrl = values['public-url'] as string | undefined;
  let publicUrl: string | undefined;
  try {
    publicUrl = rawPublicUrl === undefined ? undefined : normalizePublicUrl(rawPublicUrl);
  } catch (error) {
    throw new ServerFlagError(`--public-url: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }

  const rawInternalUrl = values['internal-url'] as string | undefined;
  let internalUrl: string | undefined;
  try {
    internalUrl = rawInternalUrl === undefined ? undefined : normalizePublicUrl(rawInternalUrl, 'internalUrl');
  } catch (error) {
    throw new ServerFlagError(`--internal-url: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const nodeId = values['node-id'] as string | undefined;
  if (nodeId !== undefined && !/^[A-Za-z0-9_.-]{1,64}$/.test(nodeId)) throw new ServerFlagError(`--node-id takes 1-64 letters, digits, '_', '.', '-', got ${nodeId}`);

  const options: ServerOptions = {
    port,
    ...(internalUrl !== undefined ? { internalUrl } : {}),
    ...(nodeId !== undefined ? { nodeId } : {}),
    ...(dataDir !== undefined ? { dataDir } : {}),
    ...(publicUrl !== undefined ? { publicUrl } : {}),
    ...(databaseUrl !== undefined ? { databaseUrl } : {}),
    ...(redisUrl !== undefined ? { redisUrl } : {}),
    recognizer: recognizer as RecognizerChoice,
    host: values['host'] as string,
    accessKeys: keys,
    allowMediaHosts: allowed,
    realtimeTiming: {
      ...(numbers['rotate-every-ms'] !== undefined ? { rotateEveryMs: numbers['rotate-every-ms'] } : {}),
      ...(numbers['rotate-every-samples'] !== undefined ? { rotateEverySamples: numbers['rotate-every-samples'] } : {}),
      ...(numbers['recovery-window-ms'] !== undefined ? { recoveryWindowMs: numbers['recovery-window-ms'] } : {}),
      ...(numbers['socket-lifetime-ms'] !== undefined ? { socketLifetimeMs: numbers['socket-lifetime-ms'] } : {}),
      ...(numbers['abandon-after-ms'] !== undefined ? { abandonAfterMs: numbers['abandon-after-ms'] } : {}),
    },
    socket: {
      ...(numbers['heartbeat-interval-ms'] !== undefined ? { heartbeatIntervalMs: numbers['heartbeat-interval-ms'] } : {}),
      ...(numbers['heartbeat-timeout-ms'] !== undefined ? { heartbeatTimeoutMs: numbers['heartbeat-timeout-ms'] } : {}),
    },
    ...(numbers['retain-audio'] !== undefined ? { retainRealtimeAudioSamples: numbers['retain-audio'] * 16_000 } : {}),
    ...(numbers['max-decoders'] !== undefined || numbers['max-decoders-per-account'] !== undefined
      ? {
          pocketsphinx: {
            ...(numbers['max-decoders'] !== undefined ? { maxDecoders: numbers['max-decoders'] } : {}),
            ...(numbers['max-decoders-per-account'] !== undefined ? { maxDecodersPerAccount: numbers['max-decoders-per-account'] } : {}),
          },
        }
      : {}),
    ...(numbers['max-sessions-per-account'] !== undefined ? { maxRealtimeSessionsPerAccount: numbers['max-sessions-per-account'] } : {}),
    ...(numbers['max-sessions-per-node'] !== undefined ? { maxRealtimeSessionsPerNode: numbers['max-sessions-per-node'] } : {}),
    ...(numbers['upload-quota-bytes'] !== undefined ? { uploadQuotaBytes: numbers['upload-quota-bytes'] } : {}),
    ...(processingMs !== undefined ? { taskTiming: { processingMs } } : {}),
  };

  // --withhold-acks wins over --delay-acks-ms, and --withhold-supplements over --delay-supplements-ms.
  const socketFaults: SocketFaultRule[] = [];
  if (values['withhold-acks'] === true) socketFaults.push({ kind: 'withholdAcks' });
  else if (numbers['delay-acks-ms'] !== undefined) socketFaults.push({ kind: 'delayAcks', ms: numbers['delay-acks-ms'] });
  if (kinds !== undefined) socketFaults.push({ kind: 'withholdSupplements', kinds: kinds as SupplementKind[] });
  else if (numbers['delay-supplements-ms'] !== undefined) socketFaults.push({ kind: 'delaySupplements', ms: numbers['delay-supplements-ms'] });

  const drain = { graceMs: numbers['drain-grace-ms'] ?? NODES.drainGraceMs, timeoutMs: numbers['drain-timeout-ms'] ?? NODES.drainTimeoutMs };
  return { help, options, socketFaults, drain };
}

/** --database-url, else the environment's, checked: a postgres:// or postgresql:// URL. */
function databaseUrlOf(flag: string | undefined, fromEnv: string | undefined): string | undefined {
  const value = flag ?? (fromEnv !== undefined && fromEnv.trim() !== '' ? fromEnv : undefined);
  if (value === undefined) return undefined;
  const name = flag !== undefined ? '--database-url' : 'SOUNDCLONE_DATABASE_URL';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ServerFlagError(`${name} takes a URL like postgres://user@host:5432/db, got something that is not a URL`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new ServerFlagError(`${name} takes a postgres:// or postgresql:// URL, got ${url.protocol}//…`);
  return value;
}
