import WebSocket, { type ClientOptions } from 'ws';
import type { WebSocketConstructor } from '@soundclone/core';

const zeroMask = (mask: Uint8Array): void => {
  mask.fill(0);
};

/**
 * `ws` with a zero masking key, which both ends then skip: `server.client()`'s sessions talk only to the
 * kit's own service on 127.0.0.1, where masking (a defence for proxies between a browser and a server)
 * guards nothing and costs a pass over every byte on each side, most of the wall time of an hour of audio
 * on virtual time. The frames are still marked masked, as a client's must be.
 */
class LoopbackWebSocket extends WebSocket {
  constructor(address: string, protocols?: string | string[], options?: ClientOptions) {
    super(address, protocols, { ...options, generateMask: zeroMask });
  }
}

export const loopbackWebSocket = LoopbackWebSocket as unknown as WebSocketConstructor;
