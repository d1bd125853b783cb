import { describe, expect, it } from 'vitest';
import { PAUSE, RESUME, finishesNow, operationGate, refusedAtOnce, type OperationView } from '../../src/realtime/operation-gates.js';
import { RealtimeError } from '../../src/errors/realtime-error.js';
import { isSoundCloneError } from '../../src/errors/guards.js';
import { SessionIntent } from '../../src/realtime/session-intent.js';
import { exhaustedAt, failedBeforeReady, finalViewEnding, finishGaveUp, restFinishEnding, settle, unsavedEnding } from '../../src/realtime/ending/ending.js';
import { TERMINAL_STATES, TRANSITIONS, type SessionState } from '../../src/realtime/session-state.js';
import type { RealtimeSession } from '../../src/types/realtime.js';

const STATES = Object.keys(TRANSITIONS) as SessionState[];

function view(state: SessionState, intent = new SessionIntent(), failure?: Error): OperationView {
  return { state, terminal: TERMINAL_STATES.includes(state), intent, failure };
}

const code = (e: unknown): string | undefined => (isSoundCloneError(e, RealtimeError) ? e.code : undefined);

const finalView = (status: string): RealtimeSession =>
  ({ sessionId: 'rs_1', transcriptionId: 'tr_1', status, epoch: 1, accepting: false, partial: '', lines: [], notices: [], usage: { receivedSamples: 10n } }) as unknown as RealtimeSession;

/** The pure halves of the session: what they return for every state, so the session only applies it. */
describe('operation gates', () => {
  it('pause() goes only from streaming, is done when paused, throws the failure once ended, else invalidState', () => {
    const failure = new Error('lost');
    const outcome = Object.fromEntries(STATES.map((s) => [s, operationGate(PAUSE, view(s, undefined, s === 'failed' ? failure : undefined))]));
    expect(outcome['streaming']).toBe('go');
    expect(outcome['paused']).toBe('done');
    expect(outcome['failed']).toBe(failure);
    expect(code(outcome['closed'])).toBe('REALTIME_CLOSED');
    for (const s of ['finishing', 'rotating', 'pausing', 'reconnecting', 'connecting', 'idle']) expect(code(outcome[s])).toBe('REALTIME_INVALID_STATE');
  });

  it('resume() mirrors it from paused; pause() waits for a resume on its way', () => {
    expect(operationGate(RESUME, view('paused'))).toBe('go');
    expect(operationGate(RESUME, view('streaming'))).toBe('done');
    expect(code(operationGate(RESUME, view('finishing')))).toBe('REALTIME_INVALID_STATE');
    const resuming = new SessionIntent();
    resuming.resumeAsked();
    expect(PAUSE.canDecide(view('paused', resuming))).toBe(false);
    expect(PAUSE.canDecide(view('paused'))).toBe(true);
    for (const s of ['rotating', 'reconnecting', 'pausing'] as const) {
      expect(PAUSE.canDecide(view(s))).toBe(false);
      expect(RESUME.canDecide(view(s))).toBe(false);
    }
  });

  it('a pause or resume that gave up is withdrawn only while its message has not gone out on the live socket', () => {
    const pausing = new SessionIntent();
    pausing.pauseAsked();
    expect(PAUSE.withdraws(view('pausing', pausing), false)).toBe(true);
    expect(PAUSE.withdraws(view('pausing', pausing), true)).toBe(false);
    expect(PAUSE.withdraws(view('paused', pausing), false)).toBe(false);
    expect(PAUSE.withdraws(view('failed', pausing), false)).toBe(false);
    const resuming = new SessionIntent();
    resuming.resumeAsked();
    expect(RESUME.withdraws(view('paused', resuming), false)).toBe(true);
    expect(RESUME.withdraws(view('paused', resuming), true)).toBe(false);
    expect(RESUME.withdraws(view('streaming', resuming), false)).toBe(false);
  });

  it('refuses a bad timeout or an aborted signal before any wait; finishing waits for session.ready while (re)connecting', () => {
    const controller = new AbortController();
    controller.abort();
    expect(refusedAtOnce({ call: 'pause', timeoutMs: Number.NaN, failure: () => undefined })?.name).toBe('ValidationError');
    expect(code(refusedAtOnce({ call: 'pause', timeoutMs: 10, signal: controller.signal, failure: () => undefined }))).toBe('REALTIME_ABORTED');
    expect(refusedAtOnce({ call: 'pause', timeoutMs: Number.POSITIVE_INFINITY, failure: () => undefined })).toBeUndefined();
    expect(STATES.filter((s) => !finishesNow(s))).toEqual(['connecting', 'reconnecting']);
  });
});

describe('session endings', () => {
  it('a REST finish ends finished with its view, or failed with its error', async () => {
    const done = await settle(() => Promise.resolve(finalView('COMPLETED')));
    expect(restFinishEnding('recovery window expired', done)).toMatchObject({ to: 'finished', reason: 'recovery window expired: finished over REST' });
    const refused = new Error('HTTP 500');
    const failed = await settle(() => Promise.reject(refused));
    expect(restFinishEnding('gave up', failed)).toEqual({ to: 'failed', error: refused, reason: 'gave up; REST finish failed' });
    const thrown = await settle((): Promise<RealtimeSession> => {
      throw refused;
    });
    expect(thrown).toEqual({ ok: false, caught: refused });
  });

  it('without a REST client nothing can be saved; a final view that cannot be read fails the session', async () => {
    expect(code((unsavedEnding('x', true) as { error: Error }).error)).toBe('REALTIME_RECOVERY_WINDOW_EXPIRED');
    expect(code((unsavedEnding('x', false) as { error: Error }).error)).toBe('REALTIME_CLOSED');
    expect(finalViewEnding('closed 4409', undefined)).toMatchObject({ to: 'failed', reason: 'closed 4409' });
    expect(finalViewEnding('closed 4409', await settle(() => Promise.resolve(finalView('COMPLETED'))))).toMatchObject({ to: 'finished', reason: 'the session was finished elsewhere' });
  });

  it('finish() that timed out fails the session; one the user aborted closes it', () => {
    expect(finishGaveUp(RealtimeError.timeout('finish', 5))).toMatchObject({ to: 'failed', reason: 'finish timed out' });
    expect(finishGaveUp(RealtimeError.aborted('finish', undefined))).toMatchObject({ to: 'closed', reason: 'finish aborted' });
  });

  it('the balance: the notice’s cursor, else the last acknowledged one; a session failed before ready rejects connect()', () => {
    expect(exhaustedAt({ code: 'BALANCE_EXHAUSTED', receivedSamples: '16000' } as never, 9)).toBe(16_000);
    expect(exhaustedAt({ code: 'BALANCE_EXHAUSTED', receivedSamples: 'soon' } as never, 9)).toBe(9);
    expect(code(failedBeforeReady(finalView('FAILED'), false))).toBe('REALTIME_SESSION_FAILED');
    expect(failedBeforeReady(finalView('FAILED'), true)).toBeUndefined();
    expect(failedBeforeReady(finalView('COMPLETED'), false)).toBeUndefined();
  });
});
