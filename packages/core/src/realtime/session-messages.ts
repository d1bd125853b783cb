import type { EventEmitter } from 'eventemitter3';
import { CLOSE_CODES, REALTIME, REALTIME_SPENDING } from '../protocol.js';
import type { RealtimeNotice, RealtimeSession } from '../types/realtime.js';
import type { AudioOutbox } from './audio-outbox.js';
import type { FramePump } from './frame-pump.js';
import type { ServerMessage, SessionReadyMessage } from './server-messages.js';
import type { RealtimeSessionEvents } from './session-events.js';
import type { SessionIntent } from './session-intent.js';
import type { StateMachine } from './session-state.js';
import type { SessionStreams } from './session-streams.js';
import type { SessionTranscript } from './session-transcript.js';
import type { SocketTransport } from './socket-transport.js';

/** The session's parts the messages act on (by reference), and what only the session can do. */
export interface MessageHost {
  readonly machine: StateMachine;
  readonly outbox: AudioOutbox;
  readonly sender: FramePump;
  readonly transcript: SessionTranscript;
  readonly subjects: SessionStreams;
  readonly intent: SessionIntent;
  /** Id of the current socket (messages of other sockets never get here). */
  readonly transportId: number | undefined;
  readonly emit: EventEmitter<RealtimeSessionEvents>['emit'];
  /** session.ready arrived: mark the socket ready, start the heartbeat. Returns the reconnect attempt, or undefined for the first connect. */
  socketReady(m: SessionReadyMessage): number | undefined;
  finished(view: RealtimeSession, reason: string): void;
  /** session.notice BALANCE_EXHAUSTED: the server stops taking audio and ends the session itself. */
  balanceExhausted(notice: RealtimeNotice): void;
  /** Drops the socket and goes through the reconnect path. */
  resync(t: SocketTransport, reason: string): void;
}

/**
 * What the server says, applied to the session: the handshake on every socket, acknowledgements,
 * rotation, pause and resume answers, transcript events, refusals. Holds the epoch (the session's
 * position in the server's recording segments) and the rotation in progress.
 */
export class SessionMessages {
  #epoch: number = REALTIME.firstEpoch;
  #rotatingFrom: number | undefined;

  constructor(private readonly host: MessageHost) {}

  /** The current epoch: set by session.ready and session.resumed only. */
  get epoch(): number {
    return this.#epoch;
  }

  handle(t: SocketTransport, m: ServerMessage): void {
    const { outbox, subjects, transcript, machine, intent } = this.host;
    switch (m.type) {
      case 'ping':
        t.sendJson({ type: 'pong', id: m.id ?? null });
        return;
      case 'pong':
        return;
      case 'session.ready':
        this.#onReady(m);
        return;
      case 'audio.ack':
        outbox.acknowledge(m.receivedSamples);
        subjects.backpressure.next(outbox.stats());
        this.host.emit('backpressure', outbox.stats());
        this.host.sender.pump();
        return;
      case 'transcript.partial':
        if (m.epoch < this.#epoch) return; // an epoch already left: stale
        subjects.partials.next(m);
        return;
      case 'transcript.line':
        transcript.addLine(m.line);
        return;
      case 'transcript.alignment':
      case 'transcript.entities':
      case 'transcript.revision':
      case 'transcript.language': {
        transcript.supplement(m);
        if (m.type === 'transcript.entities') subjects.entities.next(m);
        return;
      }
      case 'usage.updated':
        if (m.usage !== undefined) subjects.usage.next(m.usage);
        if (m.rotate) this.#onRotate(m.epoch);
        return;
      case 'session.notice':
        transcript.addNotice(m.notice);
        if (m.notice.code === REALTIME_SPENDING.exhaustedNotice) this.host.balanceExhausted(m.notice);
        return;
      case 'session.paused':
        outbox.acknowledge(m.receivedSamples);
        outbox.rewindTo(m.receivedSamples);
        if (machine.state === 'pausing' || machine.state === 'streaming' || machine.state === 'rotating') {
          intent.paused(); // ours or one over REST: audio is refused until resume()
          machine.set('paused', 'session.paused');
        }
        return;
      case 'session.resumed':
        this.#onResumed(m.epoch, m.receivedSamples);
        return;
      case 'session.finished':
        this.host.finished(m.session, 'finished');
        return;
      case 'error':
        this.#onError(t, m);
        return;
    }
  }

  sendResume(): void {
    this.host.sender.sendResume(this.#epoch);
  }

  #onReady(m: SessionReadyMessage): void {
    const { outbox, sender, machine, intent } = this.host;
    const attempt = this.host.socketReady(m);
    const reconnect = attempt !== undefined;
    sender.newSocket(intent.finish || intent.pause);
    this.#epoch = m.epoch;
    // Lines committed while we were away arrive in the view: new ones are emitted, known ones updated.
    if (m.session !== undefined) this.host.transcript.merge(m.session);
    outbox.acknowledge(m.receivedSamples);
    outbox.rewindTo(m.receivedSamples);
    if (reconnect) this.host.emit('reconnected', { attempt, receivedSamples: m.receivedSamples, resendSamples: outbox.unsent });
    const rotated = m.awaitingResume && m.status === 'ACTIVE';
    if (rotated) this.#rotatingFrom = this.#epoch;
    if (intent.finish) {
      // Draining states rotate without leaving the state (see #onRotate). Paused with audio still to
      // send (written after a resume() the server never got, or left by a pause that went ahead
      // undrained): a new epoch takes it first, as finish() does when called while paused.
      machine.set('finishing', reconnect ? 'reconnected while finishing' : 'finish()');
      if (rotated || (m.status === 'PAUSED' && outbox.unsent > 0)) this.sendResume();
    } else if (m.status === 'PAUSED' && intent.resume) {
      // resume() went out on a socket that dropped before the server took it: ask again.
      machine.set('paused', 'reconnected: paused, resuming');
      this.sendResume();
    } else if (m.status === 'PAUSED') {
      intent.paused();
      machine.set('paused', reconnect ? 'reconnected: paused' : 'session is paused');
    } else if (intent.pause) {
      machine.set('pausing', 'reconnected while pausing');
      if (rotated) this.sendResume();
    } else {
      intent.streaming();
      if (rotated) {
        machine.set('rotating', reconnect ? 'reconnected: rotation pending' : 'rotation pending');
        this.sendResume();
      } else {
        machine.set('streaming', reconnect ? 'reconnected' : 'session.ready');
      }
    }
    sender.pump();
  }

  #onRotate(epoch: number): void {
    const { outbox, sender, machine } = this.host;
    if (epoch !== this.#epoch) return; // a rotation of an epoch already left
    // The server flushed its ack just before: frames after it were refused (NOT_ACCEPTING) and are
    // sent again in the next epoch from the cursor session.resumed reports. (A server position: after
    // a declared gap the captured one is further on.)
    outbox.rewindTo(outbox.ackedServer);
    const id = this.host.transportId;
    if (machine.state === 'streaming') {
      this.#rotatingFrom = epoch;
      machine.set('rotating', 'usage.updated rotate');
      this.sendResume();
    } else if ((machine.state === 'finishing' && !sender.sent.finishSentOn(id)) || (machine.state === 'pausing' && !sender.sent.pauseSentOn(id))) {
      // Audio is still draining: rotate without leaving the state, the drain continues in the new epoch.
      // Not once the pause or finish went out: the server handles that first, and a resume after it
      // would undo the pause (a paused session resumes into the next epoch).
      this.#rotatingFrom = epoch;
      this.sendResume();
    }
  }

  #onResumed(epoch: number, received: number): void {
    const { outbox, sender, machine, intent } = this.host;
    this.#epoch = epoch;
    sender.resumeAnswered();
    intent.resumeTaken();
    outbox.acknowledge(received);
    outbox.rewindTo(received);
    if (machine.state === 'rotating' || machine.state === 'paused') machine.set('streaming', `resumed in epoch ${epoch}`);
    if (this.#rotatingFrom !== undefined && epoch !== this.#rotatingFrom) {
      this.host.emit('rotated', { fromEpoch: this.#rotatingFrom, toEpoch: epoch, atSample: received });
    }
    this.#rotatingFrom = undefined;
    sender.pump();
  }

  #onError(t: SocketTransport, m: Extract<ServerMessage, { type: 'error' }>): void {
    const { outbox, sender } = this.host;
    if (m.fatal) {
      // The close with its code follows; RECOVERY_WINDOW_EXPIRED is handled there.
      this.host.emit('debug', { kind: 'fatal-error', detail: { code: m.code, message: m.message } });
      return;
    }
    const received = Number(m.details?.['receivedSamples'] ?? Number.NaN);
    if (m.code === 'BEYOND_CURSOR' && Number.isSafeInteger(received)) {
      // The server misses audio before this frame: send again from its cursor.
      outbox.rewindTo(received);
      sender.pump();
    }
    const aboutMessage = m.details?.['frameEpoch'] === undefined;
    if (aboutMessage && (m.code === 'WRONG_EPOCH' || m.code === 'SESSION_CLOSED') && sender.sent.resumeSentOn(t.id) && !this.host.intent.finish) {
      // Our session.resume was refused: our idea of the epoch is wrong. A new socket's session.ready
      // tells the truth; resync through the reconnect path instead of guessing.
      this.host.emit('debug', { kind: 'resync', detail: { code: m.code, message: m.message } });
      t.close(CLOSE_CODES.normal, 'resync');
      this.host.resync(t, `resync after refused session.resume (${m.code})`);
      return;
    }
    // NOT_ACCEPTING / WRONG_EPOCH for frames in flight across a rotation or pause are expected, and so is
    // BALANCE_EXHAUSTED for frames in flight when the balance ran out (the notice decides, not these).
    this.host.emit('debug', { kind: 'refused', detail: { code: m.code, message: m.message } });
  }
}
