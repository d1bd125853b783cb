import { REALTIME_SPENDING } from '../../protocol.js';
import type { RealtimeNotice, RealtimeSession } from '../../types/realtime.js';
import type { SentOnSocket } from '../audio/frame-pump.js';
import type { SupplementMessage } from '../transcript/line-store.js';
import type { ServerMessage, SessionReadyMessage, WireLine } from './server-messages.js';
import type { EmitAction } from '../session-events.js';
import type { SessionIntentView } from '../session-intent.js';
import type { SessionState } from '../session-state.js';

/** The audio cursors as the messages read them (the session moves them, on the actions returned). */
export interface AudioView {
  /** The server's last acknowledged cursor, in its own positions. */
  readonly ackedServer: number;
  /** Samples a rewind to this server position leaves to send. */
  unsentFrom(serverPosition: number): number;
}

/** What the session knows when a message arrives (read only: the messages decide, the session acts). */
export interface MessageContext {
  readonly state: SessionState;
  /** The session's epoch (recording segment) before this message. */
  readonly epoch: number;
  /** Id of the socket the message came on (messages of other sockets never get here). */
  readonly transportId: number;
  readonly intent: SessionIntentView;
  readonly sent: SentOnSocket;
  readonly audio: AudioView;
  /** session.ready only: the reconnect attempt that made it, undefined for the first connect. */
  readonly reconnectAttempt?: number | undefined;
}

/**
 * What the session does about a message, in this order. The messages never change the state, the
 * epoch, the audio or the transcript, nor send anything themselves: they return these, and the session
 * (the one owner of all of it) runs them.
 *
 *   epoch        the session is in this epoch from now (session.ready, session.resumed)
 *   acknowledge  the server has every sample before `received`: free them
 *   rewind       send again from the server's cursor `to`
 *   backpressure emit `backpressure` with the audio's stats after the acknowledgement
 *   line, supplement, notice, merge
 *                into the transcript (a session view: its lines and notices); emit what is new
 *   state        move to `to` (intent: the user's intent the server's answer settles, first)
 *   resume       send session.resume for the current epoch (once per socket)
 *   pump         send what the state and the in-flight window allow
 *   resumed      session.resumed: the resume owed was taken (intent and per-socket record)
 *   pong         answer a ping on the socket it came on
 *   probeAnswered  a pong: the ack watchdog's probe (if it is the one) was answered
 *   finished     the final view arrived
 *   exhausted    the balance is used up (session.notice BALANCE_EXHAUSTED)
 *   resync       drop the socket and reconnect: our idea of the epoch is wrong
 *   recycle      socket.recycle: the server closes this socket in closeInMs; open the next one now
 *                (socket/handoff.ts)
 *   emit         an event, as it is
 */
export type MessageAction =
  | { readonly do: 'epoch'; readonly epoch: number }
  | { readonly do: 'acknowledge'; readonly received: number }
  | { readonly do: 'rewind'; readonly to: number }
  | { readonly do: 'backpressure' }
  | { readonly do: 'line'; readonly line: WireLine }
  | { readonly do: 'supplement'; readonly message: SupplementMessage }
  | { readonly do: 'notice'; readonly notice: RealtimeNotice }
  | { readonly do: 'merge'; readonly view: RealtimeSession }
  | { readonly do: 'state'; readonly to: SessionState; readonly reason: string; readonly intent?: 'paused' | 'streaming' }
  | { readonly do: 'resume' }
  | { readonly do: 'pump' }
  | { readonly do: 'resumed' }
  | { readonly do: 'pong'; readonly id: unknown }
  | { readonly do: 'probeAnswered'; readonly id: unknown }
  | { readonly do: 'finished'; readonly view: RealtimeSession; readonly reason: string }
  | { readonly do: 'exhausted'; readonly notice: RealtimeNotice }
  | { readonly do: 'resync'; readonly reason: string }
  | { readonly do: 'recycle'; readonly closeInMs: number }
  | EmitAction<'partial' | 'usage' | 'reconnected' | 'rotated' | 'debug'>;

const NOTHING: readonly MessageAction[] = [];

/**
 * What the server says, turned into actions for the session: the handshake on every socket,
 * acknowledgements, rotation, pause and resume answers, transcript events, refusals. Keeps one thing of
 * its own: the epoch a rotation in progress started from (for the `rotated` event).
 */
export class SessionMessages {
  #rotatingFrom: number | undefined;

  handle(m: ServerMessage, ctx: MessageContext): readonly MessageAction[] {
    switch (m.type) {
      case 'ping':
        return [{ do: 'pong', id: m.id ?? null }];
      case 'pong':
        return [{ do: 'probeAnswered', id: m.id }];
      case 'session.ready':
        return this.#onReady(m, ctx);
      case 'audio.ack':
        return [{ do: 'acknowledge', received: m.receivedSamples }, { do: 'backpressure' }, { do: 'pump' }];
      case 'transcript.partial':
        if (m.epoch < ctx.epoch) return NOTHING; // an epoch already left: stale
        return [{ do: 'emit', event: 'partial', payload: m }];
      case 'transcript.line':
        return [{ do: 'line', line: m.line }];
      case 'transcript.alignment':
      case 'transcript.entities':
      case 'transcript.revision':
      case 'transcript.language':
        return [{ do: 'supplement', message: m }];
      case 'usage.updated': {
        const usage: readonly MessageAction[] = m.usage === undefined ? NOTHING : [{ do: 'emit', event: 'usage', payload: m.usage }];
        return m.rotate ? this.#onRotate(m.epoch, ctx, usage) : usage;
      }
      case 'session.notice':
        return m.notice.code === REALTIME_SPENDING.exhaustedNotice ? [{ do: 'notice', notice: m.notice }, { do: 'exhausted', notice: m.notice }] : [{ do: 'notice', notice: m.notice }];
      case 'session.paused': {
        const moves: MessageAction[] = [{ do: 'acknowledge', received: m.receivedSamples }, { do: 'rewind', to: m.receivedSamples }];
        // Ours or one over REST: audio is refused until resume().
        if (ctx.state === 'pausing' || ctx.state === 'streaming' || ctx.state === 'rotating') moves.push({ do: 'state', to: 'paused', reason: 'session.paused', intent: 'paused' });
        return moves;
      }
      case 'session.resumed':
        return this.#onResumed(m.epoch, m.receivedSamples, ctx);
      case 'session.finished':
        return [{ do: 'finished', view: m.session, reason: 'finished' }];
      case 'error':
        return this.#onError(m, ctx);
      case 'socket.recycle':
        return [{ do: 'recycle', closeInMs: m.closeInMs }];
    }
  }

  /**
   * session.ready, after the session marked the socket ready and gave the pump a fresh start on it.
   * Decides the state the new socket finds the session in from the server's status and the intent.
   */
  #onReady(m: SessionReadyMessage, ctx: MessageContext): readonly MessageAction[] {
    const { intent } = ctx;
    const attempt = ctx.reconnectAttempt;
    const reconnect = attempt !== undefined;
    const actions: MessageAction[] = [{ do: 'epoch', epoch: m.epoch }];
    // Lines committed while we were away arrive in the view: new ones are emitted, known ones updated.
    if (m.session !== undefined) actions.push({ do: 'merge', view: m.session });
    actions.push({ do: 'acknowledge', received: m.receivedSamples }, { do: 'rewind', to: m.receivedSamples });
    // What the rewind leaves to send (read before the session applies it: the same number).
    const unsent = ctx.audio.unsentFrom(m.receivedSamples);
    if (reconnect) actions.push({ do: 'emit', event: 'reconnected', payload: { attempt, receivedSamples: m.receivedSamples, resendSamples: unsent } });
    const rotated = m.awaitingResume && m.status === 'ACTIVE';
    if (rotated) this.#rotatingFrom = m.epoch;
    if (intent.finish) {
      // Draining states rotate without leaving the state (see #onRotate). Paused with audio still to
      // send (written after a resume() the server never got, or left by a pause that went ahead
      // undrained): a new epoch takes it first, as finish() does when called while paused.
      actions.push({ do: 'state', to: 'finishing', reason: reconnect ? 'reconnected while finishing' : 'finish()' });
      if (rotated || (m.status === 'PAUSED' && unsent > 0)) actions.push({ do: 'resume' });
    } else if (m.status === 'PAUSED' && intent.resume) {
      // resume() went out on a socket that dropped before the server took it: ask again.
      actions.push({ do: 'state', to: 'paused', reason: 'reconnected: paused, resuming' }, { do: 'resume' });
    } else if (m.status === 'PAUSED') {
      actions.push({ do: 'state', to: 'paused', reason: reconnect ? 'reconnected: paused' : 'session is paused', intent: 'paused' });
    } else if (intent.pause) {
      actions.push({ do: 'state', to: 'pausing', reason: 'reconnected while pausing' });
      if (rotated) actions.push({ do: 'resume' });
    } else if (rotated) {
      actions.push({ do: 'state', to: 'rotating', reason: reconnect ? 'reconnected: rotation pending' : 'rotation pending', intent: 'streaming' }, { do: 'resume' });
    } else {
      actions.push({ do: 'state', to: 'streaming', reason: reconnect ? 'reconnected' : 'session.ready', intent: 'streaming' });
    }
    actions.push({ do: 'pump' });
    return actions;
  }

  /** usage.updated rotate:true; `usage`: its usage event, emitted once the cursor moved back. */
  #onRotate(epoch: number, ctx: MessageContext, usage: readonly MessageAction[]): readonly MessageAction[] {
    if (epoch !== ctx.epoch) return usage; // a rotation of an epoch already left
    // The server flushed its ack just before: frames after it were refused (NOT_ACCEPTING) and are
    // sent again in the next epoch from the cursor session.resumed reports. (A server position: after
    // a declared gap the captured one is further on.)
    const moved: readonly MessageAction[] = [{ do: 'rewind', to: ctx.audio.ackedServer }, ...usage];
    const { state, sent, transportId: id } = ctx;
    if (state === 'streaming') {
      this.#rotatingFrom = epoch;
      return [...moved, { do: 'state', to: 'rotating', reason: 'usage.updated rotate' }, { do: 'resume' }];
    }
    if ((state === 'finishing' && !sent.finishSentOn(id)) || (state === 'pausing' && !sent.pauseSentOn(id))) {
      // Audio is still draining: rotate without leaving the state, the drain continues in the new epoch.
      // Not once the pause or finish went out: the server handles that first, and a resume after it
      // would undo the pause (a paused session resumes into the next epoch).
      this.#rotatingFrom = epoch;
      return [...moved, { do: 'resume' }];
    }
    return moved;
  }

  #onResumed(epoch: number, received: number, ctx: MessageContext): readonly MessageAction[] {
    const actions: MessageAction[] = [{ do: 'epoch', epoch }, { do: 'acknowledge', received }, { do: 'rewind', to: received }, { do: 'resumed' }];
    if (ctx.state === 'rotating' || ctx.state === 'paused') actions.push({ do: 'state', to: 'streaming', reason: `resumed in epoch ${epoch}` });
    if (this.#rotatingFrom !== undefined && epoch !== this.#rotatingFrom) {
      actions.push({ do: 'emit', event: 'rotated', payload: { fromEpoch: this.#rotatingFrom, toEpoch: epoch, atSample: received } });
    }
    this.#rotatingFrom = undefined;
    actions.push({ do: 'pump' });
    return actions;
  }

  #onError(m: Extract<ServerMessage, { type: 'error' }>, ctx: MessageContext): readonly MessageAction[] {
    const detail = { code: m.code, message: m.message };
    if (m.fatal) {
      // The close with its code follows; RECOVERY_WINDOW_EXPIRED is handled there.
      return [{ do: 'emit', event: 'debug', payload: { kind: 'fatal-error', detail } }];
    }
    const actions: MessageAction[] = [];
    const received = Number(m.details?.['receivedSamples'] ?? Number.NaN);
    if ((m.code === 'BEYOND_CURSOR' || m.code === 'SERVICE_UNAVAILABLE') && Number.isSafeInteger(received)) {
      // The server misses audio before this frame, or could not take this one now (its store did not
      // answer): send again from its cursor.
      actions.push({ do: 'rewind', to: received }, { do: 'pump' });
    }
    const aboutMessage = m.details?.['frameEpoch'] === undefined;
    if (aboutMessage && (m.code === 'WRONG_EPOCH' || m.code === 'SESSION_CLOSED') && ctx.sent.resumeSentOn(ctx.transportId) && !ctx.intent.finish) {
      // Our session.resume was refused: our idea of the epoch is wrong. A new socket's session.ready
      // tells the truth; resync through the reconnect path instead of guessing.
      actions.push({ do: 'emit', event: 'debug', payload: { kind: 'resync', detail } }, { do: 'resync', reason: `resync after refused session.resume (${m.code})` });
      return actions;
    }
    // NOT_ACCEPTING / WRONG_EPOCH for frames in flight across a rotation or pause are expected, and so is
    // BALANCE_EXHAUSTED for frames in flight when the balance ran out (the notice decides, not these).
    actions.push({ do: 'emit', event: 'debug', payload: { kind: 'refused', detail } });
    return actions;
  }
}
