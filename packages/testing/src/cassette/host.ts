import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type WebSocket from 'ws';
import type { WebSocketServer } from 'ws';

/** A request's or response's whole body. */
export function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** Listens on a free loopback port; resolves with `127.0.0.1:<port>`. */
export async function listenLoopback(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes a loopback host (the recorder's, the replay server's): its sockets cut, its port given back. */
export async function closeHost(server: Server, wss: WebSocketServer, sockets: ReadonlySet<WebSocket>, connections: ReadonlySet<Socket>): Promise<void> {
  for (const ws of sockets) ws.terminate();
  wss.close();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    for (const socket of connections) socket.destroy();
  });
}
