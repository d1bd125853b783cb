/**
 * Why the live state (Redis, startServer redisUrl) could not be used: REDIS_NEEDS_DATABASE (a redis
 * URL without a database URL: the live state holds what a session is doing now, the database what it
 * did and what it costs, and one is no use without the other), REDIS_URL_INVALID (not a redis:// or
 * rediss:// URL), REDIS_UNAVAILABLE (no answer from it at start).
 */
export type LiveStateErrorCode = 'REDIS_NEEDS_DATABASE' | 'REDIS_URL_INVALID' | 'REDIS_UNAVAILABLE';

export class LiveStateError extends Error {
  override readonly name = 'LiveStateError';
  constructor(
    readonly code: LiveStateErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isLiveStateError(value: unknown): value is LiveStateError {
  return value instanceof LiveStateError || (value instanceof Error && value.name === 'LiveStateError');
}

/** A redis:// or rediss:// URL, else LiveStateError REDIS_URL_INVALID. */
export function checkRedisUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new LiveStateError('REDIS_URL_INVALID', 'redisUrl takes a URL like redis://127.0.0.1:6379, got something that is not a URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new LiveStateError('REDIS_URL_INVALID', `redisUrl takes a redis:// or rediss:// URL, got ${url.protocol}//…`);
  return value;
}
