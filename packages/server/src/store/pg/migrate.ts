import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { StoreError } from '../store.js';
import { classify } from './connection.js';

/**
 * Versioned migrations: numbered files `NNNN_name.sql` in src/store/pg/migrations/, applied in order,
 * each in its own transaction together with its row in schema_migrations (version, name, sha256).
 *
 * Several nodes may start at once against one database: each takes a session advisory lock
 * (MIGRATION_LOCK) on a dedicated connection first, so one applies what is missing and the others,
 * once they get the lock, find nothing left to do. A node that crashes while holding it releases it
 * with its connection.
 *
 * Refused with StoreError STORE_SCHEMA_MISMATCH: a database holding a version this server does not
 * have (a newer server migrated it: an older one must not run against it), or an applied file whose
 * contents changed since.
 *
 * The files are read from the package's src/ (shipped: package.json "files"), located relative to this
 * module. This module is src/store/pg/migrate.ts and, built, dist/store/pg/migrate.js: both are three
 * levels below the package root, so one relative path serves both.
 */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../src/store/pg/migrations/', import.meta.url));

/** Key of the advisory lock held while migrating (any fixed bigint; "soundclone" on a phone keypad). */
export const MIGRATION_LOCK = 7686325663n;

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): readonly Migration[] {
  const migrations: Migration[] = [];
  for (const file of readdirSync(dir).sort()) {
    const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
    if (match === null) continue;
    const sql = readFileSync(`${dir}/${file}`, 'utf8');
    migrations.push({ version: Number(match[1]), name: match[2] as string, sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  return migrations;
}

/** Applies the missing migrations under the migration lock; returns the versions this call applied. */
export async function migrate(connectionString: string, options: { readonly migrations?: readonly Migration[]; readonly connectTimeoutMs?: number } = {}): Promise<readonly number[]> {
  const migrations = options.migrations ?? loadMigrations();
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: options.connectTimeoutMs ?? 5000, keepAlive: true });
  // Errors of a connected client also come as events; the awaited query reports them here.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw classify(error);
  }
  const applied: number[] = [];
  try {
    // Bounded: a holder that never lets go fails the start instead of hanging it.
    await client.query("SET statement_timeout = '60s'");
    await client.query('SELECT pg_advisory_lock($1)', [String(MIGRATION_LOCK)]);
    await client.query('RESET statement_timeout');
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Map<number, string>();
    for (const row of (await client.query<{ version: number; checksum: string }>('SELECT version, checksum FROM schema_migrations')).rows) done.set(row.version, row.checksum);
    const known = new Map(migrations.map((m) => [m.version, m]));
    for (const [version, checksum] of done) {
      const m = known.get(version);
      if (m === undefined) throw new StoreError('STORE_SCHEMA_MISMATCH', `the database has schema version ${version}, which this server does not know: a newer server migrated it`);
      if (m.checksum !== checksum) throw new StoreError('STORE_SCHEMA_MISMATCH', `migration ${version} (${m.name}) was applied with different contents than this server's file`);
    }
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      applied.push(m.version);
    }
    await client.query('SELECT pg_advisory_unlock($1)', [String(MIGRATION_LOCK)]);
  } catch (error) {
    throw classify(error);
  } finally {
    // Ending the session releases the lock too, whatever happened above.
    await client.end().catch(() => undefined);
  }
  return applied;
}
