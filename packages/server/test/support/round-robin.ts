import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * What stands in for the balancer in the multi-node tests: a plain 127.0.0.1 TCP forwarder that sends
 * each new connection to the next node in turn (no stickiness, no health checks: an HTTP balancer that
 * keeps connections alive routes per connection too). `next` says which node the next connection goes
 * to, so a test can make a socket land on the node that does not hold its session; `landed` records
 * the port each connection went to.
 */
export class RoundRobin {
  private readonly server: Server;
  private readonly open = new Set<Socket>();
  readonly landed: number[] = [];
  port = 0;
  next = 0;

  constructor(private readonly targets: readonly number[]) {
    this.server = createServer((client) => this.accept(client));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  private accept(client: Socket): void {
    const port = this.targets[this.next % this.targets.length] as number;
    this.next += 1;
    this.landed.push(port);
    const upstream = connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.open.add(socket);
      socket.on('close', () => this.open.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  async close(): Promise<void> {
    for (const socket of this.open) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A free 127.0.0.1 port (for a node that must be started after the balancer in front of it). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
