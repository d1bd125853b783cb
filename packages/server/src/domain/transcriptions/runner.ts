import type { DecodedTrack } from '../../media/decode.js';
import { collect, feedOf } from '../../media/recognizer-feed.js';
import { RECOGNIZER_REFUSALS } from '../../protocol.js';
import { isRecognizerError } from '../../recognition/errors.js';
import type { Recognizer } from '../../recognition/recognizer.js';
import { sleep, type Clock } from '../../util/clock.js';
import { EXPORTERS } from '../../exports/index.js';
import type { Account } from '../accounts/accounts.js';
import type { Store } from '../../store/store.js';
import { renderExport } from './downloads.js';
import { isTerminal, type Task, type Tasks } from './tasks.js';
import { buildTranscript } from './transcript.js';
import { SUPPORTED_ENTITY_CATEGORIES, type TranscriptionOptions } from './request.js';

/** Test knobs: how long each batch phase takes (ms). Hold a task non-terminal with a long processing. */
export interface TaskTiming {
  readonly queueMs: number;
  readonly processingMs: number;
  readonly reconcilingMs: number;
}

export const DEFAULT_TIMING: TaskTiming = { queueMs: 10, processingMs: 50, reconcilingMs: 10 };

/**
 * Runs one batch task through its statuses (spec "States and transitions"):
 *
 *   QUEUED --queueMs--> PROCESSING --recognise, processingMs--> RECONCILING --build transcript,
 *   pre-generate exportFormats, settle--> COMPLETED (PARTIAL when a pre-generated export failed)
 *   any failure --> FAILED, reservation released (nothing charged); errorCode RECOGNIZER_UNAVAILABLE
 *                   when the recogniser failed, INTERNAL otherwise
 *
 * A requested entity category outside SUPPORTED_ENTITY_CATEGORIES is the model's run-time rejection
 * (spec rule 6): FAILED with errorCode INPUT_INVALID.
 */
export class TranscriptionRunner {
  constructor(
    private readonly store: Store,
    private readonly tasks: Tasks,
    private readonly recognizer: Recognizer,
    private readonly timing: TaskTiming,
    private readonly clock: Clock,
    private readonly signal: AbortSignal,
  ) {}

  async run(created: Task, account: Account, media: DecodedTrack, options: TranscriptionOptions): Promise<void> {
    // The latest row this run wrote: what a failure is judged against.
    let task = created;
    try {
      await sleep(this.timing.queueMs, this.signal);
      // The server is closing: leave the task where it is rather than work for nobody.
      if (this.signal.aborted) return;
      task = await this.tasks.setStatus(task, 'PROCESSING', this.clock.now());
      const rejected = options.entityCategories.filter((c) => !(SUPPORTED_ENTITY_CATEGORIES as readonly string[]).includes(c));
      if (rejected.length > 0) {
        return await this.fail(task, 'INPUT_INVALID', `options.entityCategories: the model rejected ${rejected.join(', ')} (supported: ${SUPPORTED_ENTITY_CATEGORIES.join(', ')})`, false, 'FIX_INPUT');
      }
      // Decoded block by block from the compact upload (media/recognizer-feed.ts), never whole.
      const feeds = options.separateChannels ? Array.from({ length: media.channelCount }, (_, c) => feedOf(media, c)) : [feedOf(media, 'mix')];
      const recognition = {
        languageHint: task.languageHint,
        vocabularyHints: options.vocabularyHints,
        maxSpeakers: options.separateSpeakers ? (options.maxSpeakerCount ?? 32) : 1,
        includeSoundEvents: options.includeSoundEvents,
        removeDisfluencies: options.removeDisfluencies,
        owner: account.id,
      };
      const result = this.recognizer.recognizeFeeds !== undefined
        ? await this.recognizer.recognizeFeeds({ ...recognition, feeds })
        : await this.recognizer.recognize({ ...recognition, channels: feeds.map(collect) });
      await sleep(this.timing.processingMs, this.signal);
      if (this.signal.aborted) return;
      const transcript = buildTranscript(result, options);
      task = await this.tasks.setStatus(task, 'RECONCILING', this.clock.now(), {
        transcript,
        detectedLanguage: transcript.languageCode,
        audioDurationMs: BigInt(media.durationMs),
      });
      await sleep(this.timing.reconcilingMs, this.signal);
      let exportFailed = false;
      const cache = this.tasks.exportsOf(task.id);
      for (const format of options.exportFormats) {
        try {
          cache.set(format, await renderExport(task, format, EXPORTERS));
        } catch {
          exportFailed = true;
        }
      }
      const settled = await this.store.settleBatch(task.id, { status: exportFailed ? 'PARTIAL' : 'COMPLETED', durationMs: task.audioDurationMs, now: this.clock.now() });
      if (settled === 'already') return;
      task = settled;
    } catch (error) {
      // Reached its end already (only recording that failed): an ended task is never failed afterwards.
      if (isTerminal(task.status)) return;
      // A recogniser that cannot serve (a decoder that would not load) is worth a retry, and says so.
      if (isRecognizerError(error)) return this.fail(task, RECOGNIZER_REFUSALS.taskErrorCode, `recognition failed: ${error.message}`, true, 'RETRY');
      return this.fail(task, 'INTERNAL', `processing failed: ${(error as Error).message}`, true, 'RETRY');
    }
  }

  private async fail(task: Task, errorCode: string, message: string, retryable: boolean, action: 'FIX_INPUT' | 'RETRY'): Promise<void> {
    try {
      await this.store.failTask(task.id, { errorCode, message, retryable, action, requestId: task.requestId }, this.clock.now());
    } catch {
      // The kept state could not record it (StateStoreError STATE_WRITE_FAILED): the task is FAILED in
      // memory, and a later start fails it as interrupted from what was last recorded. Nobody awaits
      // this run, so throwing would only end the process.
    }
  }
}
