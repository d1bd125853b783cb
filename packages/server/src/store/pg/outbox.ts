import type pg from 'pg';
import { ID_PREFIXES } from '../../protocol.js';
import { randomId } from '../../util/ids.js';
import { StoreError, type DeliveryAttempt, type DeliveryOutcome, type DeliveryRow, type Store, type TaskRow } from '../store.js';
import type { PgAccess } from './connection.js';
import { deliveryFrom, type DeliverySql } from './rows.js';

/**
 * The outbox: a claim is a conditional UPDATE over `FOR UPDATE SKIP LOCKED` rows, so senders on
 * several nodes never claim one delivery together.
 */
export function pgOutbox(db: PgAccess): Store['outbox'] {
  return {
    claimDue: async (now: number, max: number, leaseMs: number): Promise<readonly DeliveryRow[]> => {
      const r = await db.query<DeliverySql>(
        `UPDATE webhook_delivery SET held_until = $1::int8 + $3::int8
         WHERE event_id IN (SELECT event_id FROM webhook_delivery WHERE outcome = 'pending' AND held_until <= $1 ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING *`,
        [String(now), max, String(leaseMs)],
      );
      return r.sort((a, b) => (a.seq < b.seq ? -1 : 1)).map(deliveryFrom);
    },
    recordAttempt: async (eventId: string, attempt: DeliveryAttempt, outcome: DeliveryOutcome, heldUntil: number): Promise<DeliveryRow> => {
      const r = await db.query<DeliverySql>(
        `UPDATE webhook_delivery SET attempts = (attempts::jsonb || jsonb_build_array($2::jsonb))::json, outcome = $3, held_until = $4
         WHERE event_id = $1 RETURNING *`,
        [eventId, JSON.stringify(attempt), outcome, String(heldUntil)],
      );
      if (r[0] === undefined) throw StoreError.deliveryNotFound(eventId);
      return deliveryFrom(r[0]);
    },
    list: async (): Promise<readonly DeliveryRow[]> => (await db.query<DeliverySql>('SELECT * FROM webhook_delivery ORDER BY seq', [])).map(deliveryFrom),
  };
}

/** A batch task that asks for a completion webhook gets its delivery in the transaction that ends it. */
export async function addDelivery(c: pg.PoolClient, row: TaskRow, now: number): Promise<void> {
  const url = notifies(row);
  if (url === undefined) return;
  await c.query('INSERT INTO webhook_delivery (event_id, task_id, url, created_at) VALUES ($1, $2, $3, $4)', [randomId(ID_PREFIXES.event), row.id, url, String(now)]);
}


/** The webhook URL of a batch task that asks to be told when it ends. */
export function notifies(row: TaskRow): string | undefined {
  return row.kind === 'batch' && row.options?.notify === true ? row.options.notifyUrl : undefined;
}
