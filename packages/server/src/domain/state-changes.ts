import type { Account } from './accounts/accounts.js';
import type { Task } from './transcriptions/tasks.js';
import type { Voice } from './accounts/voices.js';

/**
 * What the domain tells whoever keeps its state (state/state-store.ts with a dataDir; nobody without).
 * Each change is emitted after the in-memory state moved and before the caller answers, and names the
 * whole entity as it now is, so recording it is one write and replaying it is "last one wins":
 *
 *   task            created or changed status; carries everything the task holds (transcript, billing).
 *                   The owning account's character ledger is recorded with it in the same write: a
 *                   reservation, a settlement or a release never lands without its task, or twice.
 *   voice           created (clone or saved design: savedDesignId) or renamed
 *   covers-deleted  ids an account deleted
 *   idempotency     a transcription create's Idempotency-Key, its body hash and the task it made
 *                   (emitted after that task's own change), so a retry after a restart replays
 */
export type StateChange =
  | { readonly kind: 'task'; readonly task: Task }
  | { readonly kind: 'voice'; readonly voice: Voice; readonly savedDesignId?: string }
  | { readonly kind: 'covers-deleted'; readonly account: Account; readonly ids: readonly string[] }
  | { readonly kind: 'idempotency'; readonly scope: string; readonly key: string; readonly bodyHash: string; readonly taskId: string; readonly requestId: string };

export type ChangeSink = (change: StateChange) => void;

/** Without a data directory nothing is kept: changes go nowhere. */
export const DISCARD_CHANGES: ChangeSink = () => undefined;
