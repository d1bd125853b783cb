import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
// Real time even under a test's fake timers (util/real-timers.ts).
import { setTimeout, clearTimeout, setInterval, clearInterval } from '../util/real-timers.js';

/** One direction of a connection: what waits for the throttle, and whether reading is held back for it. */
interface Pipe {
  readonly from: Socket;
  readonly to: Socket;
  readonly direction: 'up' | 'down';
  readonly queue: Buffer[];
  queued: number;
  /** Reading `from` is paused because the queue is full (a bottleneck's buffer: the sender feels it). */
  held: boolean;
  /** Bytes this direction may still send now (a token bucket refilled at the throttle's rate). */
  budget: number;
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
  /** Half-open: bytes are swallowed both ways while both TCP connections stay up. */
  blackhole: boolean;
  /** Nothing moves until the stall ends (stalls may overlap: a count). */
  stalls: number;
  readonly pipes: readonly [Pipe, Pipe];
}

/** The queue of a throttled direction: past it, the proxy stops reading and the sender's buffers fill. */
const LINK_BUFFER_BYTES = 32 * 1024;
/** The throttle moves bytes this often, and lets at most this much time's worth through at once. */
const THROTTLE_TICK_MS = 10;
const THROTTLE_BURST_MS = 20;

/**
 * A TCP proxy on 127.0.0.1 in front of this service that misbehaves on command, as networks do: `cut()`
 * resets every connection, `stall(ms)` stops forwarding for a while (bytes queue up), `halfOpen()`
 * swallows everything without closing (a dead NAT mapping), `throttle(bytesPerSecond)` makes the link
 * slow but alive (a mobile uplink: bytes pass at that rate, a small buffer ahead of it, and the sender's
 * socket buffers fill behind it). The SDK's fault tests and the half-open benchmark put the realtime
 * socket through it; new connections pass normally, except that a throttle holds for them too.
 */
export class ChaosProxy {
  private readonly server: Server;
  private readonly pairs = new Set<Pair>();
  private readonly rates: { up: number | undefined; down: number | undefined } = { up: undefined, down: undefined };
  private ticker: ReturnType<typeof setInterval> | undefined;
  /** Stalls under way: close() ends them, so no timer outlives the proxy. */
  private readonly stallTimers = new Set<ReturnType<typeof setTimeout>>();
  private lastTick = 0;
  port = 0;
  connections = 0;

  constructor(private targetPort: number, private readonly targetHost = '127.0.0.1') {
    this.server = createServer((client) => this.accept(client));
  }

  /**
   * Sends new connections to another port from now on (current ones stay where they are). A proxy
   * can then listen first and the service start behind it knowing the proxy's address (its publicUrl).
   */
  retarget(port: number): void {
    this.targetPort = port;
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  private accept(client: Socket): void {
    this.connections += 1;
    const upstream = connect(this.targetPort, this.targetHost);
    const pipe = (from: Socket, to: Socket, direction: Pipe['direction']): Pipe => ({ from, to, direction, queue: [], queued: 0, held: false, budget: 0 });
    const pair: Pair = { client, upstream, blackhole: false, stalls: 0, pipes: [pipe(client, upstream, 'up'), pipe(upstream, client, 'down')] };
    this.pairs.add(pair);
    for (const p of pair.pipes) p.from.on('data', (chunk: Buffer) => this.carry(pair, p, chunk));
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

  /** Bytes read from one side: swallowed, passed on, or queued for the throttle. */
  private carry(pair: Pair, p: Pipe, chunk: Buffer): void {
    if (pair.blackhole || p.to.destroyed) return;
    if (this.rates[p.direction] === undefined && p.queued === 0) {
      p.to.write(chunk);
      return;
    }
    p.queue.push(chunk);
    p.queued += chunk.length;
    if (p.queued >= LINK_BUFFER_BYTES && !p.held) {
      p.held = true;
      p.from.pause();
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

  /** Stops forwarding for `ms`; queued bytes flow afterwards (at the throttle's rate, if one is set). */
  stall(ms: number): void {
    for (const pair of this.pairs) {
      pair.stalls += 1;
      for (const p of pair.pipes) p.from.pause();
      const timer = setTimeout(() => {
        this.stallTimers.delete(timer);
        pair.stalls -= 1;
        if (pair.stalls > 0) return;
        for (const p of pair.pipes) if (!p.held) p.from.resume();
        this.tick(); // what queued for a throttle lifted meanwhile goes now
      }, ms);
      this.stallTimers.add(timer);
    }
  }

  /** Swallows every byte of the current connections without closing them. */
  halfOpen(): void {
    for (const pair of this.pairs) {
      pair.blackhole = true;
      for (const p of pair.pipes) {
        p.queue.length = 0;
        p.queued = 0;
        if (p.held && pair.stalls === 0) p.from.resume();
        p.held = false;
      }
    }
  }

  /**
   * A slow link: from now on, the current connections and new ones carry at most `bytesPerSecond` in
   * `direction` ('up': client to service, the way audio goes; 'down'; 'both'). `undefined` lifts it (what
   * is queued goes at once).
   */
  throttle(bytesPerSecond: number | undefined, direction: 'up' | 'down' | 'both' = 'up'): void {
    if (bytesPerSecond !== undefined && !(Number.isFinite(bytesPerSecond) && bytesPerSecond > 0)) throw new RangeError(`throttle takes bytes per second above 0, got ${String(bytesPerSecond)}`);
    if (direction !== 'down') this.rates.up = bytesPerSecond;
    if (direction !== 'up') this.rates.down = bytesPerSecond;
    const throttled = this.rates.up !== undefined || this.rates.down !== undefined;
    if (throttled && this.ticker === undefined) {
      this.lastTick = performance.now();
      this.ticker = setInterval(() => this.tick(), THROTTLE_TICK_MS);
    }
    if (!throttled) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
    this.tick();
  }

  /** Moves what each throttled direction may send since the last tick; an unthrottled one sends all it holds. */
  private tick(): void {
    const now = performance.now();
    const elapsedMs = now - this.lastTick;
    this.lastTick = now;
    for (const pair of this.pairs) {
      if (pair.stalls > 0) continue;
      for (const p of pair.pipes) {
        const rate = this.rates[p.direction];
        p.budget = rate === undefined ? Number.POSITIVE_INFINITY : Math.min(p.budget + (rate * elapsedMs) / 1000, (rate * THROTTLE_BURST_MS) / 1000);
        while (p.queue.length > 0 && p.budget >= 1 && !p.to.destroyed) {
          const head = p.queue[0] as Buffer;
          const take = Math.min(head.length, Math.floor(p.budget));
          p.to.write(take === head.length ? head : head.subarray(0, take));
          if (take === head.length) p.queue.shift();
          else p.queue[0] = head.subarray(take);
          p.queued -= take;
          p.budget -= take;
        }
        if (rate === undefined) p.budget = 0;
        if (p.held && p.queued < LINK_BUFFER_BYTES / 2) {
          p.held = false;
          if (pair.stalls === 0) p.from.resume();
        }
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.ticker);
    this.ticker = undefined;
    for (const timer of this.stallTimers) clearTimeout(timer);
    this.stallTimers.clear();
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
