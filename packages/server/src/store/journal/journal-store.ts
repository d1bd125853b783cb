import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DataDirLock } from './data-dir-lock.js';
import { Journal } from './journal.js';
import { StateStoreError } from './state-error.js';
import { accountFromRecord, checkRecord, header, taskFromRecord, taskRecord, type StateRecord } from './records.js';
import { MemoryStore, type StoreChange } from '../memory-store.js';
import type { SeedInput } from '../store.js';

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

/** Compact once this many lines were appended since the last rewrite and most of them are superseded. */
const COMPACT_AFTER_APPENDS = 2000;

/**
 * The data-directory engine: the memory engine (memory-store.ts) serves, and every change it makes is
 * written to the journal (state/journal.ts) before the caller answers, one fsync'd line per changed
 * row. It owns the directory: the lock, the journal and the folded view of it, one latest record per
 * entity (`task:<id>`, `voice:<id>`, `account:<id>`, `design:<id>`, `covers:<account>`). The view is
 * what compaction writes, so records of accounts this run was not started with are kept.
 *
 *   open(dir)  lock -> read journal (repair a cut-off last line) -> fold
 *   seed()     the seeded rows, then the kept records over them (a kept row wins; no line written)
 *   changed()  one line per change, folded into the view
 *   close()    close the journal, release the lock
 *
 * The memory state moves before the line is written, as the service always did: a write that fails
 * (STATE_WRITE_FAILED, a full disk) reaches the caller while memory is already ahead of the file, and
 * the next start serves what the file says (docs/protocol.md "Local state").
 */
export class JournalStore extends MemoryStore {
  override readonly engine = 'journal' as const;
  private readonly view = new Map<string, StateRecord>();
  private appended = 0;
  private applied = false;
  private closed = false;
  readonly report: StateReport;

  private constructor(
    private readonly journal: Journal,
    private readonly lock: DataDirLock,
    values: readonly StateRecord[],
    report: Omit<StateReport, 'records' | 'interruptedTasks'>,
  ) {
    super();
    for (const value of values) this.fold(value);
    this.report = { ...report, records: this.view.size, interruptedTasks: 0 };
  }

  /** Throws StateStoreError STATE_LOCKED or STATE_CORRUPT (nothing held on failure). */
  static open(dir: string): JournalStore {
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
      const store = new JournalStore(journal, lock, values, { dataDir, journal: file, ...(dropped !== undefined ? { dropped } : {}) });
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

  /** Seeded rows first, then the kept records over them, so kept voices keep their place in the list. */
  override async seed(input: SeedInput): Promise<void> {
    await super.seed(input);
    if (this.applied) return;
    this.applied = true;
    for (const record of this.view.values()) {
      switch (record.type) {
        case 'account': {
          const kept = accountFromRecord(record);
          const seeded = this.ledgers.get(record.id);
          // The plan is configuration (the key's overrides this run), the counts are kept.
          this.restoreLedger({ accountId: record.id, planKey: seeded?.planKey ?? '', periodEndsAt: kept.periodEndsAt, chars: kept.chars });
          break;
        }
        case 'voice':
          this.restoreVoice(record.voice);
          break;
        case 'design-saved': {
          const design = this.designs.get(record.designId);
          if (design !== undefined) design.saved = true;
          else this.designs.set(record.designId, { accountId: '', saved: true });
          break;
        }
        case 'task':
          this.restoreTask(taskFromRecord(record));
          break;
        case 'covers-deleted':
          for (const id of record.ids) this.deletedCovers.add(id);
          break;
        case 'idempotency':
          this.keys.set(`${record.scope}\n${record.key}`, {
            scope: record.scope, key: record.key, bodyHash: record.bodyHash, taskId: record.taskId, requestId: record.requestId,
            ...(record.sessionId !== undefined ? { sessionId: record.sessionId } : {}),
          });
          break;
        case 'header':
          break;
      }
    }
  }

  override async recoverInterrupted(accountIds: readonly string[], now: number): Promise<number> {
    const failed = await super.recoverInterrupted(accountIds, now);
    this.report.interruptedTasks = failed;
    return failed;
  }

  /** One line per change. Throws StateStoreError STATE_WRITE_FAILED when the line cannot be synced. */
  protected override changed(change: StoreChange): void {
    // After close (server shutdown) a late change is not written: the entity keeps its last recorded
    // state, and a task caught mid-run is failed as interrupted at the next start.
    if (this.closed) return;
    let record: StateRecord;
    switch (change.kind) {
      case 'task':
        record = taskRecord(change.task, change.ledger);
        break;
      case 'voice':
        record = { type: 'voice', voice: change.voice, ...(change.savedDesignId !== undefined ? { savedDesignId: change.savedDesignId } : {}) };
        break;
      case 'covers-deleted':
        record = { type: 'covers-deleted', accountId: change.accountId, ids: change.ids };
        break;
      case 'idempotency': {
        const r = change.row;
        record = { type: 'idempotency', scope: r.scope, key: r.key, bodyHash: r.bodyHash, taskId: r.taskId, requestId: r.requestId, ...(r.sessionId !== undefined ? { sessionId: r.sessionId } : {}) };
        break;
      }
    }
    this.journal.append(record);
    this.fold(record);
    this.appended++;
    if (this.appended >= COMPACT_AFTER_APPENDS && this.appended > this.view.size) this.compact();
  }

  override async close(): Promise<void> {
    await super.close();
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

