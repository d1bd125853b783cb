import { describe, expect, it } from 'vitest';
import { SERVER_FLAG_OPTIONS, SERVER_USAGE, ServerFlagError, isServerFlagError, parseServerFlags, startServer } from '../src/index.js';

/** The server's own flags as a library: the same options and faults its CLI starts with. */
describe('parseServerFlags', () => {
  it('fills the CLI defaults and requires an access key', () => {
    const { help, options, socketFaults } = parseServerFlags(['--access-key', 'k1', '--access-key', 'k2']);
    expect(help).toBe(false);
    expect(options).toMatchObject({ port: 8787, host: '127.0.0.1', recognizer: 'auto', accessKeys: ['k1', 'k2'], allowMediaHosts: [] });
    expect(socketFaults).toEqual([]);
    expect(() => parseServerFlags([])).toThrow(ServerFlagError);
  });

  it('--data-dir keeps the state there; an empty one is refused', () => {
    expect(parseServerFlags(['--access-key', 'k', '--data-dir', '/tmp/kept']).options.dataDir).toBe('/tmp/kept');
    expect(parseServerFlags(['--access-key', 'k']).options).not.toHaveProperty('dataDir');
    expect(() => parseServerFlags(['--access-key', 'k', '--data-dir', ''])).toThrow(/--data-dir takes a directory path/);
    expect(SERVER_USAGE).toContain('[--data-dir DIR]');
  });

  it('--database-url (or SOUNDCLONE_DATABASE_URL from the env given) keeps the state in PostgreSQL; not with --data-dir', () => {
    const url = 'postgres://svc@127.0.0.1:5432/soundclone';
    expect(parseServerFlags(['--access-key', 'k', '--database-url', url]).options.databaseUrl).toBe(url);
    expect(parseServerFlags(['--access-key', 'k'], { SOUNDCLONE_DATABASE_URL: url }).options.databaseUrl).toBe(url);
    expect(parseServerFlags(['--access-key', 'k', '--database-url', 'postgresql://other/db'], { SOUNDCLONE_DATABASE_URL: url }).options.databaseUrl).toBe('postgresql://other/db');
    // Without an env argument the process's environment is not read.
    expect(parseServerFlags(['--access-key', 'k']).options).not.toHaveProperty('databaseUrl');
    expect(() => parseServerFlags(['--access-key', 'k', '--database-url', 'mysql://x/y'])).toThrow(/--database-url takes a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(() => parseServerFlags(['--access-key', 'k', '--database-url', 'not a url'])).toThrow(ServerFlagError);
    expect(() => parseServerFlags(['--access-key', 'k', '--data-dir', '/tmp/d', '--database-url', url])).toThrow(/--data-dir and --database-url are mutually exclusive/);
    expect(() => parseServerFlags(['--access-key', 'k', '--data-dir', '/tmp/d'], { SOUNDCLONE_DATABASE_URL: url })).toThrow(/--data-dir and SOUNDCLONE_DATABASE_URL \(set in the environment\) are mutually exclusive/);
    expect(SERVER_USAGE).toContain('[--database-url postgres://...]');
  });

  it('--redis-url (or SOUNDCLONE_REDIS_URL) keeps live realtime sessions in Redis; only with a database URL, only redis://', () => {
    const db = 'postgres://svc@127.0.0.1:5432/soundclone';
    expect(parseServerFlags(['--access-key', 'k', '--database-url', db, '--redis-url', 'redis://127.0.0.1:6379']).options.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(parseServerFlags(['--access-key', 'k'], { SOUNDCLONE_DATABASE_URL: db, SOUNDCLONE_REDIS_URL: 'rediss://r:6380' }).options.redisUrl).toBe('rediss://r:6380');
    expect(parseServerFlags(['--access-key', 'k', '--database-url', db]).options).not.toHaveProperty('redisUrl');
    expect(() => parseServerFlags(['--access-key', 'k', '--redis-url', 'redis://127.0.0.1:6379'])).toThrow(/--redis-url needs --database-url/);
    expect(() => parseServerFlags(['--access-key', 'k'], { SOUNDCLONE_REDIS_URL: 'redis://x' })).toThrow(/SOUNDCLONE_REDIS_URL needs --database-url/);
    expect(() => parseServerFlags(['--access-key', 'k', '--database-url', db, '--redis-url', 'http://x:1'])).toThrow(/--redis-url: redisUrl takes a redis:\/\/ or rediss:\/\/ URL/);
    expect(SERVER_USAGE).toContain('[--redis-url redis://...]');
  });

  it('node flags: --internal-url and --node-id go to startServer, the drain timing to the command; bad values are refused', () => {
    const parsed = parseServerFlags(['--access-key', 'k', '--internal-url', 'http://10.0.0.7:8787/', '--node-id', 'node-7', '--drain-grace-ms', '500', '--drain-timeout-ms', '9000']);
    expect(parsed.options).toMatchObject({ internalUrl: 'http://10.0.0.7:8787', nodeId: 'node-7' });
    expect(parsed.drain).toEqual({ graceMs: 500, timeoutMs: 9000 });
    const defaults = parseServerFlags(['--access-key', 'k']);
    expect(defaults.options).not.toHaveProperty('internalUrl');
    expect(defaults.options).not.toHaveProperty('nodeId');
    expect(defaults.drain).toEqual({ graceMs: 2000, timeoutMs: 15_000 });
    expect(() => parseServerFlags(['--access-key', 'k', '--internal-url', '10.0.0.7:8787'])).toThrow(/--internal-url: internalUrl must be an absolute http\(s\) URL/);
    expect(() => parseServerFlags(['--access-key', 'k', '--node-id', 'a b'])).toThrow(/--node-id takes/);
    expect(() => parseServerFlags(['--access-key', 'k', '--drain-grace-ms', '0'])).toThrow(/--drain-grace-ms takes a positive integer/);
    for (const flag of ['--internal-url', '--node-id', '--drain-grace-ms', '--drain-timeout-ms']) expect(SERVER_USAGE).toContain(flag);
  });

  it('maps every realtime, recognition and fault flag', () => {
    const { options, socketFaults } = parseServerFlags([
      '--', '--port', '0', '--host', '::1', '--access-key', 'k', '--allow-media-host', '[::1]:9000', '--rotate-every-ms', '500', '--rotate-every-samples', '16000',
      '--recovery-window-ms', '2000', '--heartbeat-interval-ms', '100', '--heartbeat-timeout-ms', '300', '--retain-audio', '2', '--max-decoders', '12',
      '--upload-quota-bytes', '1048576', '--socket-lifetime-ms', '60000',
      '--recognizer', 'deterministic', '--withhold-acks', '--delay-acks-ms', '5', '--withhold-supplements', 'alignment,language',
    ]);
    expect(options).toEqual({
      port: 0, host: '::1', recognizer: 'deterministic', accessKeys: ['k'], allowMediaHosts: ['[::1]:9000'],
      realtimeTiming: { rotateEveryMs: 500, rotateEverySamples: 16_000, recoveryWindowMs: 2000, socketLifetimeMs: 60_000 },
      socket: { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 300 },
      retainRealtimeAudioSamples: 32_000,
      pocketsphinx: { maxDecoders: 12 },
      uploadQuotaBytes: 1_048_576,
    });
    expect(socketFaults).toEqual([{ kind: 'withholdAcks' }, { kind: 'withholdSupplements', kinds: ['alignment', 'language'] }]);
    expect(parseServerFlags(['--access-key', 'k', '--delay-acks-ms', '7', '--delay-supplements-ms', '9', '--withhold-supplements', 'all']).socketFaults).toEqual([
      { kind: 'delayAcks', ms: 7 }, { kind: 'withholdSupplements', kinds: ['alignment', 'entities', 'revision', 'language'] },
    ]);
  });

  it.each([
    [['--access-key', 'k', '--port', '70000'], '--port'],
    [['--access-key', 'k', '--max-decoders', '0'], '--max-decoders'],
    [['--access-key', 'k', '--upload-quota-bytes', '-1'], '--upload-quota-bytes'],
    [['--access-key', 'k', '--rotate-every-ms', '1.5'], '--rotate-every-ms'],
    [['--access-key', 'k', '--socket-lifetime-ms', '0'], '--socket-lifetime-ms'],
    [['--access-key', 'k', '--allow-media-host', 'example.com'], '--allow-media-host'],
    [['--access-key', 'k', '--withhold-supplements', 'words'], '--withhold-supplements'],
    [['--access-key', 'k', '--recognizer', 'whisper'], '--recognizer'],
    [['--access-key', 'k', '--colour', 'red'], 'colour'],
    [['--access-key', 'k', 'stray'], 'stray'],
  ])('refuses %j with a typed error naming %s', (argv, flag) => {
    let caught: unknown;
    try {
      parseServerFlags(argv);
    } catch (error) {
      caught = error;
    }
    expect(isServerFlagError(caught)).toBe(true);
    expect((caught as ServerFlagError).code).toBe('INVALID_SERVER_FLAG');
    expect((caught as Error).message).toContain(flag);
  });

  it('--help needs no key; the usage and the option table list every flag', () => {
    expect(parseServerFlags(['--help']).help).toBe(true);
    for (const name of Object.keys(SERVER_FLAG_OPTIONS)) if (name !== 'help') expect(SERVER_USAGE).toContain(`--${name}`);
  });

  it('starts a server with the parsed options and faults', async () => {
    const { options, socketFaults } = parseServerFlags(['--port', '0', '--access-key', 'k', '--recognizer', 'deterministic', '--withhold-acks']);
    const server = await startServer(options);
    try {
      for (const rule of socketFaults) server.faults.socket.inject(rule);
      const r = await fetch(`${server.url}/sound_clone/api/v1/stt/capabilities`, { headers: { accessKey: 'k' } });
      expect(r.status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
