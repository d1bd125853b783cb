/**
 * Misuse of the testing kit. A test that gets one has a script, a scenario or an option wrong; nothing
 * about the service under test is reported this way (its failures are the SDK's own errors).
 *
 *   TESTING_INVALID_SCRIPT    a speech script entry that cannot be placed (bad time, empty text, overlap)
 *   TESTING_INVALID_FAULT     a fault step or scenario that cannot run (unknown name, bad trigger)
 *   TESTING_NOT_FOUND         an assertion asked about a session or task the server does not know
 *   TESTING_INVALID_TIME      a time option or a duration that cannot be read, or advance() on real time
 *   TESTING_CLOSED            the test server (or its clock) was used after close()
 */
export type TestingErrorCode = 'TESTING_INVALID_SCRIPT' | 'TESTING_INVALID_FAULT' | 'TESTING_NOT_FOUND' | 'TESTING_INVALID_TIME' | 'TESTING_CLOSED';

export class TestingError extends Error {
  override readonly name = 'TestingError';

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
