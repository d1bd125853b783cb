import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 between the SDK and the reference server that can go silent as a dead NAT
 * mapping does: `blackhole()` swallows every byte of the current connections both ways without closing
 * them; `stall(ms)` stops forwarding for a while (bytes queue and flow afterwards). New connections
 * pass normally.
 */
export class BlackholeProxy {
  readonly #server: Server;
  readonly #pairs = new Set<{ client: Socket; upstream: Socket; silent: boolean }>();
  port = 0;

  constructor(private readonly target: { readonly host: string; readonly port: number }) {
    this.#server = createServer((client) => this.#accept(client));
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
    return this;
  }

  #accept(client: Socket): void {
    const upstream = connect(this.target.port, this.target.host);
    const pair = { client, upstream, silent: false };
    this.#pairs.add(pair);
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', (chunk: Buffer) => {
        if (!pair.silent && !to.destroyed) to.write(chunk);
      });
    };
    forward(client, upstream);
    forward(upstream, client);
    const end = (): void => {
      this.#pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) socket.on('error', end).on('close', end);
  }

  blackhole(): void {
    for (const pair of this.#pairs) pair.silent = true;
  }

  stall(ms: number): void {
    for (const pair of this.#pairs) {
      pair.client.pause();
      pair.upstream.pause();
      setTimeout(() => {
        pair.client.resume();
        pair.upstream.resume();
      }, ms);
    }
  }

  async close(): Promise<void> {
    for (const pair of this.#pairs) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
