export { freePort } from '../../src/cluster/free-port.js';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createHttpServer, request as httpRequest, type Server as HttpServer } from 'node:http';

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

/**
 * The same, per HTTP request, as an HTTP balancer over keep-alive connections routes (haproxy with
 * `balance roundrobin`): every request, and every socket upgrade, goes to the next node in turn.
 * `upgrades` records where each upgrade went, with its query (which names the session).
 */
export class HttpRoundRobin {
  private readonly server: HttpServer;
  private readonly open = new Set<Socket>();
  private turn = 0;
  readonly upgrades: Array<{ readonly port: number; readonly query: URLSearchParams }> = [];
  readonly requests: number[] = [];
  port = 0;

  constructor(private readonly targets: readonly number[]) {
    this.server = createHttpServer((req, res) => {
      const port = this.pick();
      this.requests.push(port);
      const upstream = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    this.server.on('connection', (socket: Socket) => {
      this.open.add(socket);
      socket.on('close', () => this.open.delete(socket));
    });
    this.server.on('upgrade', (req, client: Socket, head: Buffer) => {
      const port = this.pick();
      this.upgrades.push({ port, query: new URL(req.url ?? '/', 'http://x').searchParams });
      const upstream = connect(port, '127.0.0.1', () => {
        const lines = [];
        for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`);
        upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${lines.join('')}\r\n`);
        if (head.length > 0) upstream.write(head);
        client.pipe(upstream);
        upstream.pipe(client);
      });
      this.open.add(upstream);
      for (const socket of [client, upstream]) socket.on('error', () => undefined);
      upstream.on('close', () => {
        this.open.delete(upstream);
        client.destroy();
      });
      client.on('close', () => upstream.destroy());
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private pick(): number {
    return this.targets[this.turn++ % this.targets.length] as number;
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.open) socket.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
