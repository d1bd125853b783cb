/**
 * Why a local cluster could not start or go on (local-cluster.ts). PostgreSQL's own refusals stay
 * LocalPostgresError (local-postgres.ts); misuse (a node index that does not exist) is a RangeError.
 */
export type LocalClusterErrorCode = 'HAPROXY_NOT_INSTALLED' | 'HAPROXY_START_FAILED' | 'SERVER_NOT_BUILT' | 'NODE_START_FAILED';

export class LocalClusterError extends Error {
  override readonly name = 'LocalClusterError';
  constructor(
    readonly code: LocalClusterErrorCode,
    message: string,
    /** NODE_START_FAILED and HAPROXY_START_FAILED: the program's last output lines, oldest first. */
    readonly logTail: readonly string[] = [],
    options?: { cause?: unknown },
  ) {
    super(logTail.length === 0 ? message : `${message}\n  last output:\n${logTail.map((l) => `    ${l}`).join('\n')}`, options);
  }
}

export function isLocalClusterError(value: unknown): value is LocalClusterError {
  return value instanceof LocalClusterError || (value instanceof Error && value.name === 'LocalClusterError');
}
