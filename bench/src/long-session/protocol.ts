/** The IPC messages between the long-session bench and its server process (no HTTP hook on the server). */
export type ServerRequest =
  | { readonly type: 'memory'; readonly sessionId?: string | undefined }
  | { readonly type: 'line-bytes'; readonly sessionId: string }
  | { readonly type: 'digest' }
  | { readonly type: 'stop' };

export interface ServerMemory {
  readonly type: 'memory';
  /** After two full collections in the server process. */
  readonly heapUsed: number;
  /** V8's heap reserved (used or not), and memory held outside it (Buffers, ArrayBuffers). */
  readonly heapTotal: number;
  readonly external: number;
  readonly rss: number;
  /** Realtime sockets open on the server now. */
  readonly sockets: number;
  /** The session's committed lines, and who listens to its events (one socket: 1). */
  readonly lines: number;
  readonly sessionListeners: number;
}

export interface ServerLineBytes {
  readonly type: 'line-bytes';
  /** Heap one of the session's lines holds: a deep copy of them all, measured after a full GC, per line. */
  readonly bytesPerLine: number;
  readonly lines: number;
}

export interface ServerDigest {
  readonly type: 'digest';
  /** Every sample the server stored, in order (what it handed the recogniser), as a PcmDigest. */
  readonly samples: number;
  readonly hash: string;
  /** Recogniser streams opened: one per session (a reconnect or rotation keeps the session's stream). */
  readonly streams: number;
}

export type ServerReply = { readonly type: 'ready'; readonly url: string } | ServerMemory | ServerLineBytes | ServerDigest;
