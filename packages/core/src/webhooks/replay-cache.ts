/**
 * Event ids seen recently, bounded in time and size. An id is kept until its signed timestamp falls
 * out of the tolerance window (after which verify() refuses the event as too old anyway), so the
 * cache needs to cover only the window. When more than maxEntries ids are live, the oldest go first;
 * size maxEntries to the event rate times twice the tolerance.
 */
export class ReplayCache {
  /** eventId -> expiry (ms). Map order is insertion order, oldest first. */
  private readonly entries = new Map<string, number>();

  constructor(private readonly maxEntries = 10_000) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a positive integer, got ${maxEntries}`);
  }

  get size(): number {
    return this.entries.size;
  }

  has(id: string, nowMs: number): boolean {
    const expiry = this.entries.get(id);
    return expiry !== undefined && expiry > nowMs;
  }

  add(id: string, expiresAtMs: number, nowMs: number): void {
    this.prune(nowMs);
    this.entries.delete(id);
    this.entries.set(id, expiresAtMs);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  delete(id: string): void {
    this.entries.delete(id);
  }

  private prune(nowMs: number): void {
    for (const [id, expiry] of this.entries) if (expiry <= nowMs) this.entries.delete(id);
  }
}
