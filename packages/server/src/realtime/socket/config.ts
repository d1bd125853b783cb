/**
 * Socket settings and log entries, apart from the connection itself so the public type declarations
 * (index.ts, server.ts) never reach `ws`'s types: a consumer needs no @types/ws.
 */

/** Socket settings in force (protocol.ts SOCKET_DEFAULTS unless the server was started otherwise). */
export interface SocketConfig {
  readonly heartbeatIntervalMs: number;
  readonly heartbeatTimeoutMs: number;
  readonly ackIntervalMs: number;
  readonly usageIntervalMs: number;
  readonly maxFrameSamples: number;
  readonly maxConsecutiveErrors: number;
  readonly partialSkipBufferedBytes: number;
  readonly maxBufferedBytes: number;
  readonly slowConsumerGraceMs: number;
}

export interface SocketLogEntry {
  readonly at: number;
  /** The connection; for an upgrade refused before a connection was made (HTTP 401, 400, …), the request id. */
  readonly connectionId: string;
  readonly sessionId: string | null;
  /** connected, closed, refused (an upgrade refused with HTTP: detail `{ status, errorCode }`), unknown-message, error, fault */
  readonly kind: string;
  readonly detail?: Record<string, unknown>;
}
