import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
  /** Half-open: bytes are swallowed both ways while both TCP connections stay up. */
  blackhole: boolean;
}

/**
 * A TCP proxy on 127.0.0.1 in front of this service that misbehaves on command, as networks do: `cut()`
 * resets every connection, `stall(ms)` stops forwarding for a while (bytes queue up), `halfOpen()`
 * swallows everything without closing (a dead NAT mapping). The SDK's fault tests and the half-open
 * benchmark put the realtime socket through it; new connections pass normally.
 */
export class ChaosProxy {
  private readonly server: Server;
  private readonly pairs = new Set<Pair>();
  port = 0;
  connections = 0;

  constructor(private readonly targetPort: number, private readonly targetHost = '127.0.0.1') {
    this.server = createServer((client) => this.accept(client));
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  private accept(client: Socket): void {
    this.connections += 1;
    const upstream = connect(this.targetPort, this.targetHost);
    const pair: Pair = { client, upstream, blackhole: false };
    this.pairs.add(pair);
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', (chunk: Buffer) => {
        if (!pair.blackhole && !to.destroyed) to.write(chunk);
      });
    };
    forward(client, upstream);
    forward(upstream, client);
    const end = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', end);
      socket.on('close', end);
    }
  }

  /** Resets every connection now (the client sees an abnormal close, 1006). */
  cut(): number {
    const n = this.pairs.size;
    for (const pair of [...this.pairs]) {
      pair.client.resetAndDestroy();
      pair.upstream.destroy();
    }
    return n;
  }

  /** Stops forwarding for `ms`; queued bytes flow afterwards. */
  stall(ms: number): void {
    for (const pair of this.pairs) {
      pair.client.pause();
      pair.upstream.pause();
      setTimeout(() => {
        pair.client.resume();
        pair.upstream.resume();
      }, ms);
    }
  }

  /** Swallows every byte of the current connections without closing them. */
  halfOpen(): void {
    for (const pair of this.pairs) pair.blackhole = true;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
