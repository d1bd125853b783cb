import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  ApiError, AuthenticationError, IdempotencyConflictError, InputInvalidError, InsufficientCharactersError, MediaFetchError, NotFoundError,
  QuotaExceededError, RateLimitError, ServerError, ServiceUnavailableError, apiErrorFromResponse,
} from '../../src/errors/api-errors.js';
import { SoundCloneError } from '../../src/errors/base.js';
import { WaitTimeoutError } from '../../src/errors/client-errors.js';
import { isSoundCloneError } from '../../src/errors/guards.js';
import { buildPath, encodeSegment, path } from '../../src/http/path.js';

const headers = (id?: string): Headers => new Headers(id ? { 'X-Request-Id': id } : {});
const failure = (status: number, body: unknown, id?: string): ApiError =>
  apiErrorFromResponse({ status, body, headers: headers(id), requestIdHeader: 'X-Request-Id' });

describe('apiErrorFromResponse', () => {
  it('picks the subclass by errorCode and keeps status, request id, message and details', () => {
    const cases: Array<[string, number, new (...args: never[]) => ApiError]> = [
      ['UNAUTHORIZED', 401, AuthenticationError], ['NOT_FOUND', 404, NotFoundError], ['IDEMPOTENCY_CONFLICT', 409, IdempotencyConflictError],
      ['INPUT_INVALID', 400, InputInvalidError], ['MEDIA_FETCH_FAILED', 422, MediaFetchError], ['RATE_LIMITED', 429, RateLimitError],
      ['INSUFFICIENT_CHARACTERS', 402, InsufficientCharactersError], ['QUOTA_EXCEEDED', 403, QuotaExceededError],
      ['SERVICE_UNAVAILABLE', 503, ServiceUnavailableError], ['INTERNAL', 500, ServerError], ['SESSION_CLOSED', 409, ApiError],
    ];
    for (const [code, status, Class] of cases) {
      const error = failure(status, { code: -1, message: `m ${code}`, errorCode: code, requestId: 'req_1', details: { x: 1 } });
      expect(error).toBeInstanceOf(Class);
      expect(error).toMatchObject({ code, status, requestId: 'req_1', message: `m ${code}`, details: { x: 1 } });
      expect(isSoundCloneError(error, ApiError) && isSoundCloneError(error)).toBe(true);
    }
  });

  it('exposes violations, media reasons and falls back to the header request id and the status', () => {
    const invalid = failure(400, { code: -1, message: 'x', errorCode: 'INPUT_INVALID', details: { violations: [{ field: 'a', rule: 'b' }] } }, 'req_h');
    expect((invalid as InputInvalidError).violations).toEqual([{ field: 'a', rule: 'b' }]);
    expect(invalid.requestId).toBe('req_h');
    const media = failure(422, { code: -1, message: 'x', errorCode: 'MEDIA_FETCH_FAILED', details: { reason: 'SOURCE_REFUSED', sourceStatus: 403 } }) as MediaFetchError;
    expect([media.reason, media.sourceStatus, media.knownReason]).toEqual(['SOURCE_REFUSED', 403, true]);
    expect(failure(404, 'not json')).toMatchObject({ name: 'NotFoundError', code: 'NOT_FOUND', message: 'HTTP 404' });
    expect(failure(418, undefined)).toMatchObject({ name: 'ApiError', code: 'HTTP_418' });
    expect(failure(504, undefined)).toMatchObject({ name: 'ServerError', code: 'INTERNAL' });
  });

  it('type guards match by name across package copies', () => {
    const foreign = Object.assign(new Error('x'), { name: 'NotFoundError', code: 'NOT_FOUND', status: 404 });
    expect(isSoundCloneError(foreign, NotFoundError) && isSoundCloneError(foreign, ApiError)).toBe(true);
    expect(isSoundCloneError(foreign, InputInvalidError)).toBe(false);
    expect(isSoundCloneError(new WaitTimeoutError('tr_1', 10, undefined), WaitTimeoutError)).toBe(true);
    expect(isSoundCloneError(new DOMException('x', 'AbortError'), ApiError)).toBe(false);
  });

  it('the guard tells families apart and recognises an error of another realm, which instanceof cannot', () => {
    const realm = runInNewContext("Object.assign(new Error('x'), { name: 'RateLimitError', code: 'RATE_LIMITED', status: 429 })") as unknown;
    expect(realm instanceof Error).toBe(false);
    expect([RateLimitError, ApiError, SoundCloneError].map((kind) => isSoundCloneError(realm, kind))).toEqual([true, true, true]);
    expect([isSoundCloneError(realm, NotFoundError), isSoundCloneError(realm, WaitTimeoutError)]).toEqual([false, false]);
    // Only SoundCloneError errors: a platform error with a string code is not one, nor is a plain object.
    expect(isSoundCloneError(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(false);
    expect(isSoundCloneError({ name: 'NotFoundError', code: 'NOT_FOUND' }, NotFoundError)).toBe(false);
    // A name this copy does not know (a newer copy's class) is still of the family, of no class of this copy.
    const newer = Object.assign(new Error('x'), { name: 'FutureError', code: 'FUTURE' });
    expect([isSoundCloneError(newer), isSoundCloneError(newer, ApiError)]).toEqual([true, false]);
  });
});

describe('path encoding', () => {
  it('keeps every parameter one segment', () => {
    expect(buildPath('/stt/transcriptions/{transcriptionId}', { transcriptionId: 'tr_1' })).toBe('/sound_clone/api/v1/stt/transcriptions/tr_1');
    expect(buildPath('/voices/rename/{id}', { id: '../../user/info' })).toBe('/sound_clone/api/v1/voices/rename/..%2F..%2Fuser%2Finfo');
    expect(encodeSegment('a b?c#d')).toBe('a%20b%3Fc%23d');
    expect(encodeSegment("it's(*)!")).toBe('it%27s%28%2A%29%21');
    expect(encodeSegment('..')).toBe('%2E%2E');
    expect(() => encodeSegment('')).toThrow(TypeError);
    expect(() => buildPath('/x/{id}')).toThrow(TypeError);
    expect(path`/stt/realtime/sessions/${'rs/1'}/finish`).toBe('/sound_clone/api/v1/stt/realtime/sessions/rs%2F1/finish');
  });
});
