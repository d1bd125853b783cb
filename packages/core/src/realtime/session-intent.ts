/**
 * What the user asked of the session, which outlives sockets: a reconnect carries on with it, and
 * write() follows it rather than the transport state. A session paused (or finishing) that loses its
 * socket is `reconnecting` for a while, yet audio written then must be dropped as it was a moment
 * before; a streaming session that loses its socket buffers what is written and sends it afterwards.
 *
 *   accepting  write() takes audio           false from pause() until resume(), and from finish() on
 *   pause      pause() wants it paused       a new socket drains and sends session.pause again
 *   resume     resume() wants it streaming   a new socket that finds it PAUSED sends session.resume again
 *   finish     finish() was called           a new socket drains and sends session.finish again
 */
/** The intent as others read it; only the session changes it. */
export type SessionIntentView = Pick<SessionIntent, 'accepting' | 'pause' | 'resume' | 'finish'>;

export class SessionIntent {
  #accepting = true;
  #pause = false;
  #resume = false;
  #finish = false;

  get accepting(): boolean {
    return this.#accepting;
  }

  get pause(): boolean {
    return this.#pause;
  }

  get resume(): boolean {
    return this.#resume;
  }

  get finish(): boolean {
    return this.#finish;
  }

  pauseAsked(): void {
    this.#pause = true;
    this.#accepting = false;
  }

  /** From the call on, audio is taken (sent once the next epoch started). */
  resumeAsked(): void {
    this.#resume = true;
    this.#accepting = true;
  }

  finishAsked(): void {
    this.#finish = true;
    this.#accepting = false;
  }

  /** The server paused: ours, or a pause over REST. Audio is refused until resume(). */
  paused(): void {
    this.#pause = false;
    this.#resume = false;
    this.#accepting = false;
  }

  /** The server takes audio (session.ready ACTIVE with neither pause nor finish asked): a resume asked for was taken. */
  streaming(): void {
    this.#resume = false;
    this.#accepting = true;
  }

  /** session.resumed: the resume asked for (or a rotation's) was taken; nothing is owed any more. */
  resumeTaken(): void {
    this.#resume = false;
  }

  /** pause() gave up before session.pause went out: the session streams on. */
  withdrawPause(): void {
    this.#pause = false;
    this.#accepting = true;
  }

  /** resume() gave up before session.resume went out: the session stays paused. */
  withdrawResume(): void {
    this.#resume = false;
    this.#accepting = false;
  }
}
