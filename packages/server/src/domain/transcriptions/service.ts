import { ApiError } from '../../errors.js';
import { LIMITS, MODELS } from '@soundclone/core/internal';
import { SERVER_LIMITS } from '../../protocol.js';
import { guardedFetch, failureForStatus, type GuardOptions } from '../../media/guarded-fetch.js';
import { UndecodableMediaError, type DecodedMedia, type DecodedTrack } from '../../media/decode.js';
import type { Clock } from '../../util/clock.js';
import type { Account } from '../accounts/accounts.js';
import { IdempotencyStore, idempotencyConflict } from '../idempotency.js';
import { isExistingKey, isRefusal, type IdempotencyRow, type Store, type TaskSource } from '../../store/store.js';
import { dec } from '../../util/decimal.js';
import { isTerminal, newTask, taskView, type Task, type Tasks } from './tasks.js';
import type { BatchWorker } from './batch-worker.js';
import { checkNotifyDestination, validateTranscriptionRequest, type TranscriptionRequest } from './request.js';
import type { HeldMedia, Uploads } from './uploads.js';

/**
 * POST /stt/transcriptions end to end (spec "create a transcription"):
 *   validate (INPUT_INVALID, all violations) -> idempotency (replay / wait / IDEMPOTENCY_CONFLICT)
 *   -> resolve the source (owned upload, or guarded mediaUrl fetch) -> source-dependent rules
 *   (audioTrackIndex, rule 3, inputEncoding vs container) -> quote and reserve -> task QUEUED, run
 *   -> optional wait (waitForCompletion / waitTimeoutMs; a timeout returns the non-terminal task).
 */
export interface CreateResult {
  readonly taskId: string;
  readonly requestId: string;
  /** The key was taken by another create first (another node): this is its task, replayed. */
  readonly replayed?: boolean;
}

export class TranscriptionService {
  private readonly idempotency: IdempotencyStore<CreateResult>;

  constructor(
    private readonly store: Store,
    private readonly tasks: Tasks,
    private readonly uploads: Uploads,
    private readonly worker: BatchWorker,
    private readonly guard: Omit<GuardOptions, 'maxBytes' | 'timeoutMs'> & { timeoutMs: number },
    private readonly clock: Clock,
    private readonly signal: AbortSignal,
  ) {
    // In front of the store: concurrent retries share one outcome here; a key kept from an earlier
    // run is found in the store.
    this.idempotency = new IdempotencyStore<CreateResult>(async (scope, key) => {
      const kept = await store.idempotency.find(scope, key);
      return kept === undefined ? undefined : { bodyHash: kept.bodyHash, value: { taskId: kept.taskId, requestId: kept.requestId } };
    });
  }

  async create(account: Account, body: Record<string, unknown>, idempotencyKey: string, requestId: string): Promise<{ data: Record<string, unknown>; replayed: boolean }> {
    const request = validateTranscriptionRequest(body);
    checkNotifyDestination(request, this.guard.allowHosts);
    const scope = `${account.id}/transcriptions`;
    const { value, replayed } = await this.idempotency.run(scope, idempotencyKey, body, (bodyHash) =>
      this.start(account, request, requestId, { scope, key: idempotencyKey, bodyHash, requestId }),
    );
    let task = await this.tasks.get(account, value.taskId);
    if (request.waitForCompletion && !isTerminal(task.status)) {
      await this.tasks.waitForTerminal(task.id, request.waitTimeoutMs, this.signal);
      task = await this.tasks.get(account, value.taskId);
    }
    return { data: { ...taskView(task), requestId: value.requestId }, replayed: replayed || value.replayed === true };
  }

  /**
   * For a node that drains (SIGTERM): stops claiming batch tasks and hands the ones running here back
   * to the store at once, for another node to finish (BatchWorker.handBack). Call it before close().
   */
  handBackBatchWork(): Promise<number> {
    return this.worker.handBack();
  }

  private async start(account: Account, request: TranscriptionRequest, requestId: string, idempotency: Omit<IdempotencyRow, 'taskId'>): Promise<CreateResult> {
    const { media, source, release } = await this.resolveSource(account, request);
    let track: DecodedTrack;
    try {
      track = checkSourceRules(request, media);
    } catch (error) {
      await release();
      throw error;
    }
    const now = this.clock.now();
    const task = newTask({
      ownerId: account.id,
      kind: 'batch',
      modelId: MODELS.batch,
      title: request.title ?? (request.source.kind === 'upload' ? 'Transcription' : new URL(request.source.mediaUrl).pathname.split('/').pop() || 'Transcription'),
      languageHint: request.languageHint,
      requestId,
      status: 'QUEUED',
      options: request.options,
    }, now);
    const trackIndex = media.tracks.indexOf(track);
    // Kept with the task, so a node that takes it over reads the same media (Store.leases).
    const taskSource: TaskSource = source.kind === 'upload' ? { kind: 'upload', uploadId: source.uploadId, trackIndex } : { kind: 'hold', holdId: source.holdId, trackIndex };
    const withSource = { ...task, source: taskSource };
    let created: Task;
    try {
      // The reservation is priced on the duration the payload holds (checked in media/), never a declared one.
      const outcome = await this.store.createBatchTask({ task: withSource, durationMs: BigInt(track.durationMs), idempotency });
      if (isExistingKey(outcome)) {
        // Another node took the key first (this node's own concurrent creates share one outcome in
        // front of the store): its task, as a retry would find it.
        await release();
        if (outcome.existing.bodyHash !== idempotency.bodyHash) throw idempotencyConflict(idempotency.key);
        return { taskId: outcome.existing.taskId, requestId: outcome.existing.requestId, replayed: true };
      }
      if (isRefusal(outcome)) {
        throw new ApiError('INSUFFICIENT_CHARACTERS', `this task needs ${outcome.required} Characters; ${outcome.available} are available`, {
          requiredCharacters: dec(outcome.required),
          availableCharacters: dec(outcome.available < 0n ? 0n : outcome.available),
        });
      }
      created = outcome;
    } catch (error) {
      await release();
      throw error;
    }
    // Fetched media counts against the storage quota until its task ends, whatever the outcome: the
    // run that ends the task releases it (runner.ts), on this node or the one that took it over.
    this.worker.start(created, track);
    return { taskId: created.id, requestId };
  }

  private async resolveSource(account: Account, request: TranscriptionRequest): Promise<HeldMedia> {
    if (request.source.kind === 'upload') {
      const upload = await this.uploads.get(account, request.source.uploadId);
      if (upload === undefined) throw ApiError.notFound('upload');
      return { media: upload.media, source: { kind: 'upload', uploadId: upload.id }, release: async () => undefined };
    }
    // Full already: refused before anything is fetched.
    await this.uploads.checkRoom(account, 0);
    const response = await guardedFetch(request.source.mediaUrl, { ...this.guard, maxBytes: LIMITS.uploadMaxBytes });
    const failure = failureForStatus(response.status);
    if (failure !== undefined) throw failure;
    try {
      return await this.uploads.holdFetched(account, response.body, response.headers['content-type']);
    } catch (error) {
      if (error instanceof UndecodableMediaError) {
        const extra = { ...error.details, sourceStatus: response.status, contentType: response.headers['content-type'] ?? null };
        // Too long is the size limit's refusal, as for a body past 100 MiB; unreadable is the spec's media reason.
        if (error.code === 'PAYLOAD_TOO_LARGE') throw new ApiError('PAYLOAD_TOO_LARGE', error.message, extra);
        throw ApiError.media('UNSUPPORTED_TYPE', error.message, extra);
      }
      throw error;
    }
  }
}

/**
 * Rules that need the source: audioTrackIndex (required when there is more than one audio track), rule 3
 * (at most five channels in the selected track), inputEncoding vs content. Returns the selected track.
 */
function checkSourceRules(request: TranscriptionRequest, media: DecodedMedia): DecodedTrack {
  const violations: Array<{ field: string; rule: string }> = [];
  const tracks = media.tracks.length;
  if (request.audioTrackIndex === undefined && tracks > 1) {
    violations.push({ field: 'audioTrackIndex', rule: `is required: the source has ${tracks} audio tracks (media.audioTracks 0 to ${tracks - 1})` });
  }
  if (request.audioTrackIndex !== undefined && request.audioTrackIndex >= tracks) {
    violations.push({ field: 'audioTrackIndex', rule: `must be an index of media.audioTracks (0 to ${tracks - 1})` });
  }
  const track = media.tracks[Math.min(request.audioTrackIndex ?? 0, tracks - 1)] as DecodedTrack;
  if (request.options.separateChannels && track.channelCount > SERVER_LIMITS.separateChannelsMaxChannels) {
    violations.push({ field: 'options.separateChannels', rule: `the selected audio track has ${track.channelCount} channels; at most ${SERVER_LIMITS.separateChannelsMaxChannels} can be transcribed (rule 3)` });
  }
  if (request.options.inputEncoding === 'pcm_s16le_16' && media.container !== 'pcm_s16le_16') {
    violations.push({ field: 'options.inputEncoding', rule: 'pcm_s16le_16 requires a raw 16 kHz mono PCM16 source (uploaded as audio/L16)' });
  }
  if (request.options.inputEncoding === 'other' && media.container === 'pcm_s16le_16') {
    violations.push({ field: 'options.inputEncoding', rule: 'a raw PCM16 source requires inputEncoding pcm_s16le_16' });
  }
  if (violations.length > 0) throw ApiError.invalid(violations);
  return track;
}
