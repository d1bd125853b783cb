import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { LocalPostgres } from '../../src/cluster/local-postgres.js';
import { migrate } from '../../src/store/pg/migrate.js';

/**
 * One PostgreSQL server per test file that uses it (only those files pay for it: ~2-4 s of initdb
 * and start), with a migrated template database; `freshDatabase()` copies the template
 * (`CREATE DATABASE ... TEMPLATE`, tens of ms) so every test that needs an empty store gets its own.
 * Durability is off (fsync, synchronous_commit): nothing here outlives the run.
 */
export interface TestPostgres {
  readonly server: LocalPostgres;
  /** A new database with every migration applied and nothing else; its connection URL. */
  freshDatabase(): Promise<string>;
  /** A new database with nothing in it (not even schema_migrations); its connection URL. */
  emptyDatabase(): Promise<string>;
  /** A superuser pool on the server's `postgres` database, for test assertions on any database. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(databaseUrl: string, sql: string, params?: unknown[]): Promise<R[]>;
}

const TEMPLATE = 'soundclone_template';

export async function startTestPostgres(): Promise<TestPostgres & { stop(): Promise<void> }> {
  const server = await LocalPostgres.start({ fast: true });
  let n = 0;
  // A connection per statement: a test may restart the server in between.
  const query = async <R extends pg.QueryResultRow>(databaseUrl: string, sql: string, params: unknown[] = []): Promise<R[]> => {
    const client = new pg.Client({ connectionString: databaseUrl });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query<R>(sql, params)).rows;
    } finally {
      await client.end();
    }
  };
  try {
    await query(server.url(), `CREATE DATABASE ${TEMPLATE}`);
    await migrate(server.url(TEMPLATE));
  } catch (error) {
    await server.stop();
    throw error;
  }
  const create = async (template: string): Promise<string> => {
    const name = `t_${process.pid}_${++n}`;
    await query(server.url(), `CREATE DATABASE ${name} TEMPLATE ${template}`);
    return server.url(name);
  };
  return {
    server,
    freshDatabase: () => create(TEMPLATE),
    emptyDatabase: () => create('template0'),
    query,
    stop: () => server.stop(),
  };
}

/**
 * The file's PostgreSQL: started before its tests, stopped after them. The returned object stands for
 * it inside tests and hooks.
 */
export function postgresForFile(): TestPostgres {
  let current: (TestPostgres & { stop(): Promise<void> }) | undefined;
  beforeAll(async () => {
    current = await startTestPostgres();
  });
  afterAll(async () => {
    await current?.stop();
    current = undefined;
  });
  const running = (): TestPostgres => {
    if (current === undefined) throw new Error('the test PostgreSQL runs only during the file\'s tests and hooks');
    return current;
  };
  return {
    get server() {
      return running().server;
    },
    freshDatabase: () => running().freshDatabase(),
    emptyDatabase: () => running().emptyDatabase(),
    query: (url, sql, params) => running().query(url, sql, params),
  };
}
