/**
 * Misuse of the testing kit. A test that gets one has a script, a scenario or an option wrong; nothing
 * about the service under test is reported this way (its failures are the SDK's own errors).
 *
 *   TESTING_INVALID_SCRIPT    a speech script entry that cannot be placed (bad time, empty text, overlap)
 *   TESTING_INVALID_FAULT     a fault step or scenario that cannot run (unknown name, bad trigger)
 *   TESTING_NOT_FOUND         an assertion asked about a session or task the server does not know
 *   TESTING_INVALID_TIME      a time option or a duration that cannot be read, or advance() on real time
 *   TESTING_CLOSED            the test server (or its clock) was used after close()
 *   TESTING_REPLAY_MISMATCH   the app sent a replay server something else than the cassette holds
 *                             (ReplayMismatchError: expected and received)
 *   TESTING_INVALID_CASSETTE  a cassette that is not one (another version, no entries array)
 */
export type TestingErrorCode =
  | 'TESTING_INVALID_SCRIPT' | 'TESTING_INVALID_FAULT' | 'TESTING_NOT_FOUND' | 'TESTING_INVALID_TIME' | 'TESTING_CLOSED' | 'TESTING_REPLAY_MISMATCH' | 'TESTING_INVALID_CASSETTE';

export class TestingError extends Error {
  override readonly name: string = 'TestingError';

  constructor(
    readonly code: TestingErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isTestingError(value: unknown): value is TestingError {
  return value instanceof TestingError || (value instanceof Error && value.name === 'TestingError');
}

/**
 * A replayed app did something else than the recorded one: `expected` is what the cassette holds at
 * that point (a request, a socket, a frame), `received` what came; `at` says where (entry n, frame m).
 */
export class ReplayMismatchError extends TestingError {
  override readonly name = 'ReplayMismatchError';

  constructor(
    readonly at: string,
    readonly expected: string,
    readonly received: string,
  ) {
    super('TESTING_REPLAY_MISMATCH', `replay mismatch at ${at}: expected ${expected}, received ${received}`);
  }
}

export function isReplayMismatchError(value: unknown): value is ReplayMismatchError {
  return value instanceof ReplayMismatchError || (value instanceof Error && value.name === 'ReplayMismatchError');
}
