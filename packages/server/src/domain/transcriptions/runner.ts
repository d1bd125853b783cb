import type { DecodedTrack } from '../../media/decode.js';
import { collect, feedOf } from '../../media/recognizer-feed.js';
import { BATCH_LEASES, RECOGNIZER_REFUSALS } from '../../protocol.js';
import { isRecognizerError } from '../../recognition/errors.js';
import type { Recognizer } from '../../recognition/recognizer.js';
import { sleepOn, type TimedClock } from '../../util/clock.js';
import { EXPORTERS } from '../../exports/index.js';
import type { ClaimedTask, Lease, Store, TaskPatch, TaskRow } from '../../store/store.js';
import { renderExport } from './downloads.js';
import { isTerminal, type Task, type Tasks } from './tasks.js';
import { buildTranscript } from './transcript.js';
import { SUPPORTED_ENTITY_CATEGORIES } from './request.js';
import type { Uploads } from './uploads.js';

/** Test knobs: how long each batch phase takes (ms). Hold a task non-terminal with a long processing. */
export interface TaskTiming {
  readonly queueMs: number;
  readonly processingMs: number;
  readonly reconcilingMs: number;
}

export const DEFAULT_TIMING: TaskTiming = { queueMs: 10, processingMs: 50, reconcilingMs: 10 };

/**
 * Runs one claimed batch task through its statuses (spec "States and transitions"), from wherever it
 * stands, so a node that takes a task over finishes what another began:
 *
 *   QUEUED --queueMs--> PROCESSING --recognise, processingMs--> RECONCILING --build transcript,
 *   pre-generate exportFormats, settle--> COMPLETED (PARTIAL when a pre-generated export failed)
 *   any failure --> FAILED, reservation released (nothing charged); errorCode RECOGNIZER_UNAVAILABLE
 *                   when the recogniser failed, INTERNAL otherwise
 *
 * A task taken over in PROCESSING is recognised again (nothing of the first run was kept); one taken
 * over in RECONCILING has its transcript and is settled. Every write carries the run's lease
 * (Store.leases): once another node's claim replaced it, the write answers 'lost-lease' and the run
 * stops where it is, writing nothing more. So does a run whose `signal` aborts (the server closes, the
 * lease was lost, the node hands its tasks back): the task stays for the next claim.
 *
 * A requested entity category outside SUPPORTED_ENTITY_CATEGORIES is the model's run-time rejection
 * (spec rule 6): FAILED with errorCode INPUT_INVALID.
 *
 * Media fetched from a mediaUrl is held (counted against the quota, its bytes kept) until the task
 * ends: the run that ends it releases the hold.
 */
export class TranscriptionRunner {
  constructor(
    private readonly store: Store,
    private readonly tasks: Tasks,
    private readonly uploads: Uploads,
    private readonly recognizer: Recognizer,
    private readonly timing: TaskTiming,
    /** The service's clock: the phases (queueMs, processingMs, reconcilingMs) pass by it. */
    private readonly clock: TimedClock,
  ) {}

  /** `media`: the track at hand when this node just created the task; else read from the store by task.source. */
  async run(claimed: ClaimedTask, media: DecodedTrack | undefined, signal: AbortSignal): Promise<void> {
    const { lease } = claimed;
    // The latest row this run wrote: what a failure is judged against.
    let task = claimed.task;
    let ended = false;
    try {
      if (lease.token > BigInt(BATCH_LEASES.maxClaims)) {
        ended = await this.fail(task, lease, 'INTERNAL', `this transcription was started ${lease.token - 1n} times without finishing; nothing was charged, submit it again`, true, 'RETRY');
        return;
      }
      const options = task.options;
      const track = media ?? (task.source === undefined ? undefined : await this.uploads.trackOf(task.ownerId, task.source));
      if (options === undefined || track === undefined) {
        // Created before its media was kept for other nodes, or its upload was deleted since.
        ended = await this.fail(task, lease, 'INTERNAL', 'the media of this transcription is no longer available to the service; nothing was charged, submit it again', true, 'RETRY');
        return;
      }
      if (task.status === 'QUEUED') {
        await sleepOn(this.clock, this.timing.queueMs, signal);
        // The server is closing or the task went to another node: leave it where it is.
        if (signal.aborted) return;
        task = await this.write(lease, { status: 'PROCESSING' });
      }
      if (task.status === 'PROCESSING') {
        const rejected = options.entityCategories.filter((c) => !(SUPPORTED_ENTITY_CATEGORIES as readonly string[]).includes(c));
        if (rejected.length > 0) {
          ended = await this.fail(task, lease, 'INPUT_INVALID', `options.entityCategories: the model rejected ${rejected.join(', ')} (supported: ${SUPPORTED_ENTITY_CATEGORIES.join(', ')})`, false, 'FIX_INPUT');
          return;
        }
        // Decoded block by block from the compact upload (media/recognizer-feed.ts), never whole.
        const feeds = options.separateChannels ? Array.from({ length: track.channelCount }, (_, c) => feedOf(track, c)) : [feedOf(track, 'mix')];
        const recognition = {
          languageHint: task.languageHint,
          vocabularyHints: options.vocabularyHints,
          maxSpeakers: options.separateSpeakers ? (options.maxSpeakerCount ?? 32) : 1,
          includeSoundEvents: options.includeSoundEvents,
          removeDisfluencies: options.removeDisfluencies,
          owner: task.ownerId,
        };
        const result = this.recognizer.recognizeFeeds !== undefined
          ? await this.recognizer.recognizeFeeds({ ...recognition, feeds })
          : await this.recognizer.recognize({ ...recognition, channels: feeds.map(collect) });
        await sleepOn(this.clock, this.timing.processingMs, signal);
        if (signal.aborted) return;
        const transcript = buildTranscript(result, options);
        task = await this.write(lease, { status: 'RECONCILING', transcript, detectedLanguage: transcript.languageCode, audioDurationMs: BigInt(track.durationMs) });
      }
      if (task.status !== 'RECONCILING') {
        // Ended already (by the run that held the lease before): nothing left to do here.
        ended = true;
        return;
      }
      await sleepOn(this.clock, this.timing.reconcilingMs, signal);
      if (signal.aborted) return;
      let exportFailed = false;
      const cache = this.tasks.exportsOf(task.id);
      for (const format of options.exportFormats) {
        try {
          cache.set(format, await renderExport(task, format, EXPORTERS));
        } catch {
          exportFailed = true;
        }
      }
      const settled = await this.store.settleBatch(task.id, { status: exportFailed ? 'PARTIAL' : 'COMPLETED', durationMs: task.audioDurationMs, now: this.clock.now() }, lease);
      if (settled === 'lost-lease') return;
      ended = true;
      if (settled !== 'already') task = settled;
    } catch (error) {
      if (error instanceof LeaseLost || signal.aborted) return;
      // Reached its end already (only recording that failed): an ended task is never failed afterwards.
      if (isTerminal(task.status)) return;
      // A recogniser that cannot serve (a decoder that would not load) is worth a retry, and says so.
      if (isRecognizerError(error)) {
        ended = await this.fail(task, lease, RECOGNIZER_REFUSALS.taskErrorCode, `recognition failed: ${error.message}`, true, 'RETRY');
        return;
      }
      ended = await this.fail(task, lease, 'INTERNAL', `processing failed: ${(error as Error).message}`, true, 'RETRY');
    } finally {
      if (ended && task.source?.kind === 'hold') await this.uploads.releaseHold(task.source.holdId, task.ownerId);
    }
  }

  /** A fenced status or content change; throws LeaseLost when another claim replaced the lease. */
  private async write(lease: Lease, patch: TaskPatch): Promise<TaskRow> {
    const next = await this.store.leases.update(lease, patch, this.clock.now());
    if (next === 'lost-lease') throw new LeaseLost();
    return next;
  }

  /** Fails the task under the lease; true when it ended (failed now or before), false when the lease was lost or the store failed. */
  private async fail(task: Task, lease: Lease, errorCode: string, message: string, retryable: boolean, action: 'FIX_INPUT' | 'RETRY'): Promise<boolean> {
    try {
      return (await this.store.failTask(task.id, { errorCode, message, retryable, action, requestId: task.requestId }, this.clock.now(), lease)) !== 'lost-lease';
    } catch {
      // The kept state could not record it (StateStoreError STATE_WRITE_FAILED, a database gone): the
      // task is left for a later start (journal) or the next claim (PostgreSQL). Nobody awaits this
      // run, so throwing would only end the process.
      return false;
    }
  }
}

/** A fenced write found the lease replaced: the run stops. */
class LeaseLost extends Error {}
