import { MODELS, REALTIME } from '@soundclone/core/internal';
import { ceilDiv, dec } from '../../util/decimal.js';
import { chargeFor } from '../../domain/accounts/billing.js';
import type { Line } from './audio.js';
import type { Session } from './sessions.js';
import type { Segment, Transcript } from '../../domain/transcriptions/transcript.js';
import type { TaskRow } from '../../store/store.js';

/** Spec "line fields". */
export function lineView(line: Line): Record<string, unknown> {
  return {
    id: line.id,
    text: line.text,
    revisedText: line.revisedText,
    languageCode: line.languageCode,
    languageProbability: line.languageProbability,
    entities: line.entities,
    words: line.words,
    characterAlignments: line.characterAlignments,
  };
}

/** Spec "Real-time session" view: status is the open state, or the task status once closed. */
export function sessionView(session: Session, now: number): Record<string, unknown> {
  const audio = session.audio;
  const closed = audio.state === 'CLOSED';
  return {
    sessionId: session.id,
    transcriptionId: session.task.id,
    modelId: MODELS.realtime,
    status: closed ? session.task.status : audio.state,
    epoch: audio.epoch,
    accepting: audio.accepting,
    partial: audio.partial,
    lines: audio.lines.map(lineView),
    notices: session.notices,
    // Ours: why the session FAILED (its recogniser did), as on the History task.
    ...(session.task.error !== undefined ? { error: session.task.error } : {}),
    // Ours: whether a socket is attached and the recovery window, so a client that reads the
    // session with GET after losing its socket knows whether resuming is still possible.
    connection: {
      attached: session.attachedSockets > 0,
      recoveryDeadline: session.recovery.deadline === null ? null : new Date(session.recovery.deadline).toISOString(),
      recoveryExpired: session.recovery.expired,
    },
    usage: {
      estimatedCharacters: estimateCharacters(audio.audioSamples),
      billableCharacters: dec(session.task.billing.settled),
      elapsedMs: dec(Math.max(0, (closed ? (session.task.completedAt ?? now) : now) - session.createdAt)),
      sentSamples: dec(audio.sent),
      receivedSamples: dec(audio.received),
      capturedSamples: dec(audio.captured),
      accepting: audio.accepting,
    },
  };
}

/** The History transcript of a finished session: one segment per committed line. */
export function realtimeTranscript(session: Session): Transcript {
  const lines = session.audio.lines;
  const revisionRequested = session.request.options.rewriteInstruction !== undefined;
  const segments: Segment[] = lines.map((line) => ({
    id: line.id,
    speakerId: null,
    channelIndex: 0,
    startMs: line.startMs,
    endMs: line.endMs,
    text: line.text,
    timingStatus: line.words.length > 0 ? 'ALIGNED' : 'NOT_REQUESTED',
    tokens: line.words.map((w) => ({ text: w.text, type: 'word' as const, startMs: w.startMs, endMs: w.endMs, confidence: w.confidence })),
    characterAlignments: [],
  }));
  const text = lines.map((l) => l.text).join(' ');
  const revisionMissing = lines.some((l) => l.pending.has('revision'));
  const language = lines.find((l) => l.languageCode !== null);
  return {
    text,
    languageCode: language?.languageCode ?? null,
    languageConfidence: language?.languageProbability ?? null,
    speakers: [],
    segments,
    channelResults: [],
    entities: lines.flatMap((l) => l.entities.map((e, i) => ({ id: `${l.id}_ent_${i + 1}`, ...e, segmentId: l.id, redacted: false }))),
    revisionStatus: !revisionRequested ? 'NOT_REQUESTED' : revisionMissing ? 'FAILED' : text === '' ? 'EMPTY' : 'APPLIED',
    revisedText: revisionRequested && !revisionMissing && text !== '' ? lines.map((l) => l.revisedText ?? l.text).join(' ') : null,
    revisionErrorCode: revisionRequested && revisionMissing ? 'REVISION_NOT_RECEIVED' : null,
  };
}

/** usage.estimatedCharacters: the charge the received audio would settle at now. */
export function estimateCharacters(received: bigint): string {
  return dec(chargeFor(ceilDiv(received * 1000n, BigInt(REALTIME.sampleRate))));
}

/**
 * The view of a session whose node is gone, from what the store kept (its History task): the status,
 * the transcript's segments as lines, the charge. What only the node held (epoch, cursors, notices) is
 * not known any more: epoch 0, the sample counts derived from the charged duration (0 for a session
 * that FAILED, where nothing was charged), no notices (docs/protocol.md "Several nodes").
 */
export function storedSessionView(sessionId: string, task: TaskRow, now: number): Record<string, unknown> {
  const samples = (task.audioDurationMs * BigInt(REALTIME.sampleRate)) / 1000n;
  const segments = task.transcript?.segments ?? [];
  return {
    sessionId,
    transcriptionId: task.id,
    modelId: MODELS.realtime,
    status: task.status,
    epoch: 0,
    accepting: false,
    partial: '',
    lines: segments.map((s) => ({
      id: s.id, text: s.text, revisedText: null, languageCode: null, languageProbability: null, entities: [],
      words: s.tokens.map((t) => ({ text: t.text, startMs: t.startMs, endMs: t.endMs, confidence: t.confidence })), characterAlignments: [],
    })),
    notices: [],
    ...(task.error !== undefined ? { error: task.error } : {}),
    connection: { attached: false, recoveryDeadline: null, recoveryExpired: true },
    usage: {
      estimatedCharacters: dec(task.billing.settled),
      billableCharacters: dec(task.billing.settled),
      elapsedMs: dec(Math.max(0, (task.completedAt ?? now) - task.createdAt)),
      sentSamples: dec(samples),
      receivedSamples: dec(samples),
      capturedSamples: dec(samples),
      accepting: false,
    },
  };
}
