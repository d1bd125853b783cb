import { REALTIME_SPENDING } from '@soundclone/core/internal';
import { ApiError } from '../../errors.js';
import { ACCOUNT_LIMITS, LIVE_STATE, NODE_ADMISSION } from '../../protocol.js';
import { dec, parseCount } from '../../util/decimal.js';

/** The refusals of realtime session calls (sessions.ts), and the one body field they read. */

/** A realtime creation when the live state (Redis) could not be written: nothing was made. */
export function liveUnavailable(cause: unknown): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'no realtime session now: the live session state could not be written; try again', { reason: LIVE_STATE.unavailableReason }, { cause, retryAfterSec: 1 });
}

/** A realtime creation past the account's open-session limit. */
export function sessionLimit(max: number): ApiError {
  return new ApiError('RATE_LIMITED', `this account has ${max} realtime sessions open, its most at once; finish one first`, { reason: ACCOUNT_LIMITS.sessionLimitReason, limit: max }, { retryAfterSec: ACCOUNT_LIMITS.retryAfterSec });
}

/** A realtime creation past this node's live sessions: retryable, and another node may have room. */
export function nodeFull(max: number): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', `this server has ${max} realtime sessions live, its most at once; try again (another server may take it)`, { reason: NODE_ADMISSION.fullReason, limit: max }, { retryAfterSec: NODE_ADMISSION.retryAfterSec });
}

/** A realtime creation the balance does not cover. */
export function insufficient(minimum: bigint, left: bigint): ApiError {
  const shown = left < 0n ? 0n : left;
  return new ApiError('INSUFFICIENT_CHARACTERS', `a realtime session needs at least ${minimum} Characters available (${REALTIME_SPENDING.minimumMs / 1000} s of audio); ${shown} are available`, {
    requiredCharacters: dec(minimum),
    availableCharacters: dec(shown),
  });
}

/** Spec "pause"/"finish" body: capturedSamples, a decimal string (preferred) or a JSON number; required. */
export function capturedFrom(body: Record<string, unknown>): bigint {
  const raw = body['capturedSamples'];
  const value = parseCount(raw);
  // Say which it is: a value that was sent but is wrong (-1, 1.5, "01") is not "required".
  if (value === undefined) throw ApiError.invalidField('capturedSamples', `${raw === undefined ? 'is required: ' : 'must be '}a non-negative integer as a decimal string (or a JSON number)`);
  return value;
}
