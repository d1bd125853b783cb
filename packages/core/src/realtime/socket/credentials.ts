import type { Violation } from '../../errors/api-errors.js';
import { ValidationError } from '../../errors/client-errors.js';

/** What a credentials provider returns: a socket token (browsers) and/or an API key (sent as a header where the platform allows). */
export interface SocketCredentials {
  readonly token?: string | undefined;
  readonly apiKey?: string | undefined;
}

/**
 * Called before every reconnect attempt, so a token that expired during a long session is replaced
 * (a browser asks its backend for a fresh socket token). The first socket uses the token or key given at
 * connect()/attach().
 */
export type CredentialsProvider = () => Promise<SocketCredentials>;

/**
 * Calls the provider and checks what it gave: a ValidationError (the session fails with it: retrying
 * will not fix a provider that returns the wrong thing), or the credentials as the socket address takes them.
 */
export async function freshCredentials(provider: CredentialsProvider): Promise<{ readonly token?: string; readonly accessKey?: string }> {
  const got: unknown = await provider();
  const { token, apiKey } = (typeof got === 'object' && got !== null ? got : {}) as Record<string, unknown>;
  const violations: Violation[] = [];
  const ok = (v: unknown): v is string => typeof v === 'string' && v !== '';
  if (token !== undefined && !ok(token)) violations.push({ field: 'credentials().token', rule: 'must be a non-empty string' });
  if (apiKey !== undefined && !ok(apiKey)) violations.push({ field: 'credentials().apiKey', rule: 'must be a non-empty string' });
  if (!ok(token) && !ok(apiKey) && violations.length === 0) violations.push({ field: 'credentials()', rule: 'must resolve with a token or an apiKey' });
  if (violations.length > 0) throw new ValidationError(violations);
  return { ...(ok(token) ? { token } : {}), ...(ok(apiKey) ? { accessKey: apiKey } : {}) };
}
