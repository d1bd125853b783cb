import pg from 'pg';
import { StoreError } from '../store.js';

/**
 * The connection pool of one PostgreSQL store, and which failures mean "the database is not there".
 *
 * int8 (bigint) arrives as a string by default; this pool parses it as a JS bigint with its own type
 * table (never pg's global one, which would change every other pool in the process).
 */
export interface PoolOptions {
  readonly max?: number;
  /** Waiting for a connection (ms, default 5,000). */
  readonly connectTimeoutMs?: number;
  /**
   * One statement's answer (ms, default 30,000). The server cancels a statement that runs (or waits
   * for a lock) longer, and ends a session idle inside a transaction for longer, so a node whose
   * connection went half-open cannot hold row locks that other nodes wait on; this side gives up on an
   * answer a little later than that.
   */
  readonly queryTimeoutMs?: number;
  readonly onIdleError?: (error: Error) => void;
}

export function createPool(connectionString: string, options: PoolOptions = {}): pg.Pool {
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.INT8, (value: string) => BigInt(value));
  const queryTimeoutMs = options.queryTimeoutMs ?? 30_000;
  const pool = new pg.Pool({
    connectionString,
    types,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    idleTimeoutMillis: 10_000,
    // A peer that vanished without a FIN (a network partition) is noticed instead of waited on forever.
    keepAlive: true,
    statement_timeout: queryTimeoutMs,
    idle_in_transaction_session_timeout: queryTimeoutMs,
    query_timeout: queryTimeoutMs + 1000,
  });
  // node-postgres re-emits an idle client's error (the server restarted, the network dropped) on the
  // pool; without a listener that error would end the process. The client is discarded; the next
  // query opens a new connection.
  pool.on('error', (error) => options.onIdleError?.(error));
  return pool;
}

/** Node's socket errors that mean the server could not be reached or dropped the connection. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
/** node-postgres's own messages for a connection that ended or never came up. */
const LOST = /Connection terminated|timeout exceeded when trying to connect|timeout expired|connection timeout|Client has encountered a connection error|Connection closed|Query read timeout/i;
/** SQLSTATEs of a statement the server gave up on in time (statement_timeout, a lock not granted): nothing was written. */
const TIMED_OUT = new Set(['57014', '55P03']);

/**
 * True for a failure of the connection rather than of the statement: a socket error, SQLSTATE class 08
 * (connection exception), 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, or
 * node-postgres's terminated/timeout errors.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code)) return true;
    if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return true;
  }
  if (error instanceof AggregateError && error.errors.some((e) => isConnectionLoss(e))) return true;
  return LOST.test(error.message);
}

/** The server cancelled the statement for its time limit or a lock it could not get in time. */
export function isTimedOut(error: unknown): boolean {
  const state = sqlState(error);
  return state !== undefined && TIMED_OUT.has(state);
}

/** A connection failure or a timed-out statement as StoreError STORE_UNAVAILABLE; anything else unchanged. */
export function classify(error: unknown): unknown {
  return isConnectionLoss(error) || isTimedOut(error) ? StoreError.unavailable(error) : error;
}

/** The SQLSTATE of a database error (undefined for anything else). */
export function sqlState(error: unknown): string | undefined {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * One transaction on a pooled connection: BEGIN, `work`, COMMIT; ROLLBACK when `work` throws. A lost
 * connection (or no answer in time) before the COMMIT was sent is STORE_UNAVAILABLE (nothing was
 * written), and so is a statement the server cancelled for its time limit; a connection lost during
 * the COMMIT is STORE_OUTCOME_UNKNOWN (it may have been applied). A connection that failed is
 * discarded, not returned to the pool.
 */
/** What a part of the engine needs of it: a query on the pool (failures classified) and a transaction. */
export interface PgAccess {
  query<R extends pg.QueryResultRow>(sql: string, params: readonly unknown[]): Promise<R[]>;
  tx<T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T>;
}

export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw classify(error);
  }
  let committing = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    committing = true;
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (error) {
    if (isConnectionLoss(error)) {
      client.release(error as Error);
      throw committing ? StoreError.outcomeUnknown(error) : StoreError.unavailable(error);
    }
    try {
      await client.query('ROLLBACK');
      client.release();
    } catch (rollback) {
      client.release(rollback as Error);
    }
    throw isTimedOut(error) ? StoreError.unavailable(error) : error;
  }
}
