import { randomBytes } from 'node:crypto';

/** Opaque random ids with a readable prefix (protocol.ts ID_PREFIXES). */
export function randomId(prefix: string): string {
  return prefix + randomBytes(12).toString('base64url');
}

/** Monotonic decimal ids (voice ids are "Long" in the spec). */
export class DecimalIdSequence {
  private next: bigint;

  constructor(start: bigint) {
    this.next = start;
  }

  /** After a restore: the next id comes after `id`, so a restored id is never handed out again. */
  advancePast(id: string): void {
    const n = BigInt(id);
    if (n >= this.next) this.next = n + 1n;
  }

  take(): string {
    const id = this.next.toString();
    this.next += 1n;
    return id;
  }
}
