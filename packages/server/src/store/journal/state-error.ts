/**
 * Why the state in a data directory cannot be used (startServer({ dataDir })).
 *
 *   STATE_LOCKED        another live process (or another server in this process) holds the directory's
 *                       lock; `pid` names it. Two writers would interleave journal lines.
 *   STATE_CORRUPT       a journal line other than the last is not a valid record (the last one is a
 *                       write cut short by a crash and is dropped instead); `file` and `line` name it.
 *   STATE_WRITE_FAILED  a change could not be written and synced (disk full, permissions); the request
 *                       that made it fails rather than answer for a change that would be lost.
 */
export type StateErrorCode = 'STATE_LOCKED' | 'STATE_CORRUPT' | 'STATE_WRITE_FAILED';

export class StateStoreError extends Error {
  override readonly name = 'StateStoreError';

  constructor(
    readonly code: StateErrorCode,
    message: string,
    readonly details: { readonly file?: string; readonly line?: number; readonly pid?: number } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  static locked(dir: string, pid: number): StateStoreError {
    return new StateStoreError('STATE_LOCKED', `${dir} is in use by process ${pid} (its lock file holds that pid); stop it, or use another data directory`, { file: dir, pid });
  }

  static corrupt(file: string, line: number, why: string): StateStoreError {
    return new StateStoreError('STATE_CORRUPT', `${file}:${line}: ${why}; the journal cannot be read past it (move the file away to start empty)`, { file, line });
  }
}

export function isStateStoreError(value: unknown): value is StateStoreError {
  return value instanceof StateStoreError || (value instanceof Error && value.name === 'StateStoreError');
}
