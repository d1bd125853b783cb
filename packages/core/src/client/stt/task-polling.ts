import { TERMINAL_STATUSES } from '../../protocol.js';
import type { TranscriptionTask } from '../../types/transcription.js';
import { sleep } from '../../util/abort.js';

/**
 * Polling a task until it is terminal (spec "States and transitions": "A client polls the get call
 * until the status is terminal and stops polling terminal tasks"). The interval grows by 1.5x per
 * poll up to maxPollIntervalMs, so a long task costs few requests and a short one is seen quickly.
 * Shared by transcriptions.wait() and transcriptions.watch().
 */
export interface PollOptions {
  /** First interval between reads (default 500 ms). */
  readonly pollIntervalMs?: number;
  /** Longest interval (default 5 s). */
  readonly maxPollIntervalMs?: number;
}

export function isTerminalStatus(status: string): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

export function pollDelayMs(poll: number, options: PollOptions = {}): number {
  const first = options.pollIntervalMs ?? 500;
  const max = Math.max(first, options.maxPollIntervalMs ?? 5_000);
  return Math.min(max, Math.round(first * 1.5 ** poll));
}

/**
 * Yields every read of the task, the last one terminal. Stops (AbortError) as soon as `signal` aborts:
 * during a read (the read is aborted) or during the pause between reads (the timer is cleared).
 */
export async function* pollTask(
  read: (signal: AbortSignal) => Promise<TranscriptionTask>,
  signal: AbortSignal,
  options: PollOptions = {},
): AsyncGenerator<TranscriptionTask, void, undefined> {
  for (let poll = 0; ; poll++) {
    const task = await read(signal);
    yield task;
    if (isTerminalStatus(task.status)) return;
    await sleep(pollDelayMs(poll, options), signal);
  }
}
