import type { RealtimeSession } from '../../types/realtime.js';
import { restFinishEnding, settle, type Ending, type Settled } from './ending.js';
import type { RealtimeRest } from '../options/options.js';

// The session's REST calls, made when the session asks and handed back as values (never a rejection):
// the session re-checks its state after the await and applies what it gets. `signal` is the session's
// lifetime, so a call still running when the session ends stops with it.

/** GET the session: before a reconnect (it may have been finished, or expired, meanwhile) and for the final view after close 4409. */
export function readSession(rest: RealtimeRest, sessionId: string, signal: AbortSignal): Promise<Settled<RealtimeSession>> {
  return settle(() => rest.get(sessionId, { signal }));
}

/**
 * finish over REST with the exact capturedSamples: the server settles what it received, and what it did
 * not is a gap here and a TRANSPORT_GAP there. Returns the ending (ending.ts restFinishEnding).
 */
export async function finishOverRest(rest: RealtimeRest, sessionId: string, capturedSamples: number, why: string, signal: AbortSignal): Promise<Ending> {
  return restFinishEnding(why, await settle(() => rest.finish(sessionId, String(capturedSamples), { signal })));
}
