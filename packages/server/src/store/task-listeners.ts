import type { TaskRow } from './store.js';

/**
 * The listeners of task rows (Store.events.onTaskChanged), each told the row as it stands and then
 * every row that differs from the last one it was told. A listener added while a change lands is never
 * left without it: whatever row reaches it first is its starting point, told, so there is no moment
 * between subscribing and a first read in which a change goes unheard.
 */
export class TaskListeners {
  /** Task id -> listener -> the signature of the last row told to it (undefined: none yet). */
  private readonly byTask = new Map<string, Map<(row: TaskRow) => void, string | undefined>>();

  /** Adds a listener; returns whether it is the task's first, and the removal. */
  add(id: string, listener: (row: TaskRow) => void): { readonly first: boolean; readonly remove: () => void } {
    let told = this.byTask.get(id);
    const first = told === undefined;
    if (told === undefined) this.byTask.set(id, (told = new Map()));
    // The same function added twice is one listener.
    if (!told.has(listener)) told.set(listener, undefined);
    const set = told;
    return {
      first,
      remove: () => {
        set.delete(listener);
        if (set.size === 0 && this.byTask.get(id) === set) this.byTask.delete(id);
      },
    };
  }

  /** Tells the row to each of its task's listeners that was last told something else. */
  deliver(row: TaskRow): void {
    const told = this.byTask.get(row.id);
    if (told === undefined) return;
    const sig = signature(row);
    for (const [listener, last] of [...told]) {
      // Removed by an earlier listener of this round: not told.
      if (last === sig || !told.has(listener)) continue;
      told.set(listener, sig);
      listener(row);
    }
  }

  has(id: string): boolean {
    return this.byTask.has(id);
  }

  ids(): readonly string[] {
    return [...this.byTask.keys()];
  }

  get size(): number {
    return this.byTask.size;
  }

  clear(): void {
    this.byTask.clear();
  }
}

/** What tells two rows of one task apart for a listener (status, content, money). */
export function signature(row: TaskRow): string {
  const b = row.billing;
  return [
    row.status, row.updatedAt, row.completedAt, row.detectedLanguage, row.audioDurationMs, b.state, b.reserved, b.settled, b.released,
    row.transcript === null ? -1 : row.transcript.text.length, row.error?.errorCode ?? '',
  ].join('|');
}
