import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Accounts } from '../domain/accounts/accounts.js';
import type { Covers } from '../domain/accounts/covers.js';
import type { StateChange } from '../domain/state-changes.js';
import type { Tasks } from '../domain/transcriptions/tasks.js';
import type { TranscriptionService } from '../domain/transcriptions/service.js';
import type { Voices, Voice } from '../domain/accounts/voices.js';
import { DataDirLock } from './data-dir-lock.js';
import { Journal } from './journal.js';
import { StateStoreError } from './state-error.js';
import { accountFromRecord, checkRecord, header, taskFromRecord, taskRecord, type StateRecord } from './records.js';

/** What a start found in the data directory (RunningServer.state). */
export interface StateReport {
  readonly dataDir: string;
  readonly journal: string;
  /** Records kept (after folding repeated records of one entity). */
  readonly records: number;
  /** A last line cut short by a crash, dropped and cut off the file. */
  readonly dropped?: { readonly line: number; readonly bytes: number };
  /** Tasks that were running when the last process stopped, now FAILED with their reservation released. */
  interruptedTasks: number;
}

/** The domain objects a store restores into and records from. */
export interface Domain {
  readonly accounts: Accounts;
  readonly voices: Voices;
  readonly tasks: Tasks;
  readonly covers: Covers;
  readonly transcriptions: TranscriptionService;
}

/** Compact once this many lines were appended since the last rewrite and most of them are superseded. */
const COMPACT_AFTER_APPENDS = 2000;

/**
 * Owns the data directory: the lock, the journal (state/journal.ts) and the folded view of it, one
 * latest record per entity (`task:<id>`, `voice:<id>`, `account:<id>`, `design:<id>`, `covers:<account>`).
 * The view is what compaction writes, so records of accounts this run was not started with are kept.
 *
 *   open(dir)  lock -> read journal (repair a cut-off last line) -> fold
 *   restore()  hand the folded records to the domain (restore methods, no change emitted)
 *   record()   the domain's ChangeSink: one fsync'd line per change, folded into the view
 *   close()    close the journal, release the lock
 */
export class StateStore {
  private readonly view = new Map<string, StateRecord>();
  private appended = 0;
  private domain: Domain | undefined;
  private closed = false;
  readonly report: StateReport;

  private constructor(
    private readonly journal: Journal,
    private readonly lock: DataDirLock,
    values: readonly StateRecord[],
    report: Omit<StateReport, 'records' | 'interruptedTasks'>,
  ) {
    for (const value of values) this.fold(value);
    this.report = { ...report, records: this.view.size, interruptedTasks: 0 };
  }

  /** Throws StateStoreError STATE_LOCKED or STATE_CORRUPT (nothing held on failure). */
  static open(dir: string): StateStore {
    const dataDir = resolve(dir);
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const lock = DataDirLock.acquire(dataDir);
    let journal: Journal | undefined;
    try {
      const file = join(dataDir, 'state.jsonl');
      const opened = Journal.open(file, (value) => checkRecord(value));
      journal = opened.journal;
      const values = opened.loaded.values as StateRecord[];
      if (values.length > 0 && values[0]?.type !== 'header') throw StateStoreError.corrupt(file, 1, 'the first line is not a soundclone-state header');
      const dropped = opened.loaded.dropped;
      const store = new StateStore(journal, lock, values, { dataDir, journal: file, ...(dropped !== undefined ? { dropped } : {}) });
      // A new file gets its header; a file with repeated records of one entity is rewritten folded.
      if (values.length === 0) journal.append(header());
      else if (values.length - 1 > store.view.size) store.compact();
      return store;
    } catch (error) {
      journal?.close();
      lock.release();
      throw error;
    }
  }

  restore(domain: Domain): void {
    this.domain = domain;
    const voices: Voice[] = [];
    const designs: string[] = [];
    const keys: Array<Extract<StateRecord, { type: 'idempotency' }>> = [];
    for (const record of this.view.values()) {
      switch (record.type) {
        case 'account':
          domain.accounts.restore(record.id, accountFromRecord(record));
          break;
        case 'voice':
          voices.push(record.voice);
          break;
        case 'design-saved':
          designs.push(record.designId);
          break;
        case 'task':
          domain.tasks.restore(taskFromRecord(record));
          break;
        case 'covers-deleted':
          domain.covers.restore(record.ids);
          break;
        case 'idempotency':
          keys.push(record);
          break;
        case 'header':
          break;
      }
    }
    domain.voices.restore(voices, designs);
    // After the tasks: a key replays the very task object the server serves.
    for (const k of keys) {
      const task = domain.tasks.byId(k.taskId);
      if (task !== undefined) domain.transcriptions.restoreIdempotency(k.scope, k.key, k.bodyHash, task, k.requestId);
    }
  }

  /** The domain's ChangeSink. Throws StateStoreError STATE_WRITE_FAILED when the line cannot be synced. */
  readonly record = (change: StateChange): void => {
    // After close (server shutdown) a late change is not written: the entity keeps its last recorded
    // state, and a task caught mid-run is failed as interrupted at the next start.
    if (this.closed) return;
    let record: StateRecord;
    switch (change.kind) {
      case 'task':
        record = taskRecord(change.task, this.domain?.accounts.byId(change.task.ownerId));
        break;
      case 'voice':
        // A copy: the domain's voice object changes on rename, a record must not.
        record = { type: 'voice', voice: { ...change.voice }, ...(change.savedDesignId !== undefined ? { savedDesignId: change.savedDesignId } : {}) };
        break;
      case 'covers-deleted':
        record = { type: 'covers-deleted', accountId: change.account.id, ids: change.ids };
        break;
      case 'idempotency':
        record = { type: 'idempotency', scope: change.scope, key: change.key, bodyHash: change.bodyHash, taskId: change.taskId, requestId: change.requestId };
        break;
    }
    this.journal.append(record);
    this.fold(record);
    this.appended++;
    if (this.appended >= COMPACT_AFTER_APPENDS && this.appended > this.view.size) this.compact();
  };

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.journal.close();
    this.lock.release();
  }

  /** Rewrites the journal as the folded view (state/journal.ts: temp file, fsync, rename, fsync dir). */
  compact(): void {
    this.journal.rewrite([header(), ...[...this.view.values()].filter((r) => r.type !== 'header')]);
    this.appended = 0;
  }

  private fold(record: StateRecord): void {
    switch (record.type) {
      case 'header':
        return;
      case 'account':
        this.view.set(`account:${record.id}`, record);
        return;
      case 'voice': {
        const { savedDesignId, ...plain } = record;
        if (savedDesignId !== undefined) this.view.set(`design:${savedDesignId}`, { type: 'design-saved', designId: savedDesignId });
        this.view.set(`voice:${record.voice.id}`, plain);
        return;
      }
      case 'design-saved':
        this.view.set(`design:${record.designId}`, record);
        return;
      case 'task': {
        const { account, ...plain } = record;
        this.view.set(`task:${record.task.id}`, plain);
        if (account !== undefined) this.view.set(`account:${account.id}`, account);
        return;
      }
      case 'idempotency':
        this.view.set(`idempotency:${record.scope}\n${record.key}`, record);
        return;
      case 'covers-deleted': {
        const key = `covers:${record.accountId}`;
        const earlier = this.view.get(key);
        const ids = new Set(earlier?.type === 'covers-deleted' ? earlier.ids : []);
        for (const id of record.ids) ids.add(id);
        this.view.set(key, { type: 'covers-deleted', accountId: record.accountId, ids: [...ids] });
        return;
      }
    }
  }
}

