import { RealtimeSocketSession, type RealtimeSocketOptions } from '@soundclone/core';
import { WebAudioError } from '../errors.js';

/** What the app's backend hands the page after it created the session with its API key. */
export interface BrowserSessionGrant {
  readonly sessionId: string;
  /** The creation's `socket.token`: bound to this session, valid 10 minutes, checked when a socket opens. */
  readonly token: string;
  /** The creation's `socket.url` (ws: or wss:). */
  readonly socketUrl: string;
}

/**
 * Opens the realtime socket of a session the app's backend created, with its short-lived token only:
 * the API key never reaches the page (docs/protocol.md "URL and authentication"). The browser's
 * WebSocket is used; reconnects (after a drop, a heartbeat timeout) reuse the token, which is only
 * checked at connect time, and continue from the server's cursor with nothing lost. Resolves on
 * session.ready.
 *
 * This is core's RealtimeSocketSession, made without a SoundClone client: that client requires an API
 * key, which a page must not hold.
 */
export async function attachSession(grant: BrowserSessionGrant, options: RealtimeSocketOptions = {}): Promise<RealtimeSocketSession> {
  const problems: string[] = [];
  for (const field of ['sessionId', 'token', 'socketUrl'] as const) {
    if (typeof grant?.[field] !== 'string' || grant[field] === '') problems.push(`${field} is required and must be a non-empty string`);
  }
  if (problems.length === 0 && !/^wss?:\/\//.test(grant.socketUrl)) problems.push('socketUrl must be a ws: or wss: URL');
  if (problems.length > 0) throw new WebAudioError('WEB_AUDIO_INVALID_OPTION', problems.join('; '));
  const session = new RealtimeSocketSession({ ...options, sessionId: grant.sessionId, token: grant.token, socketUrl: grant.socketUrl });
  return session.start();
}
