/**
 * What was sent on which socket, by transport id: session.finish, session.pause and session.resume
 * each go out once per socket, and a new socket (session.ready) owes again whatever is still asked.
 * Also holds the drain deadline: pause() and finish() go ahead unacknowledged after it.
 *
 * The one record of these facts; FramePump writes it as it sends, the session reads it through the
 * pump's questions (sentPause(id) …) and never sets it directly.
 */
export class SocketSends {
  #finishOn = -1;
  #pauseOn = -1;
  #resumeOn = -1;
  #drainDeadline = 0;

  get drainDeadline(): number {
    return this.#drainDeadline;
  }

  /** A new socket said session.ready: nothing owed was sent on it yet. */
  reset(): void {
    this.#finishOn = this.#pauseOn = this.#resumeOn = -1;
  }

  drainUntil(deadline: number): void {
    this.#drainDeadline = deadline;
  }

  finishSent(id: number): void {
    this.#finishOn = id;
  }

  pauseSent(id: number): void {
    this.#pauseOn = id;
  }

  resumeSent(id: number): void {
    this.#resumeOn = id;
  }

  /** A new pause(): the session.pause sent on this socket earlier was answered already. */
  pauseAnswered(): void {
    this.#pauseOn = -1;
  }

  /** session.resumed: the resume sent was taken; a later rotation or resume sends a new one. */
  resumeAnswered(): void {
    this.#resumeOn = -1;
  }

  finishSentOn(id: number | undefined): boolean {
    return id !== undefined && this.#finishOn === id;
  }

  pauseSentOn(id: number | undefined): boolean {
    return id !== undefined && this.#pauseOn === id;
  }

  resumeSentOn(id: number | undefined): boolean {
    return id !== undefined && this.#resumeOn === id;
  }
}
