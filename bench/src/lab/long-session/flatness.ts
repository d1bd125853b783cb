import type { MemoryReading } from './session.js';

/**
 * "Memory flat": the readings after a warm-up (the first twelfth of the run, at least one reading:
 * JIT, pools, the first rotation and reconnect) are split into quarters; flat when the mean of the last
 * quarter is within `tolerance` (5 %) above the mean of the first. Only growth fails: memory that falls
 * is not a leak. A quarter is at least one reading.
 */
export interface Flatness {
  readonly first: number;
  readonly last: number;
  /** last / first − 1. */
  readonly growth: number;
  readonly pass: boolean;
  /** The audio minutes the two quarters span. */
  readonly firstSpan: readonly [number, number];
  readonly lastSpan: readonly [number, number];
}

export const FLAT_TOLERANCE = 0.05;

export function flatness(readings: readonly MemoryReading[], value: (r: MemoryReading) => number, tolerance = FLAT_TOLERANCE): Flatness {
  const total = readings.at(-1)?.audioMinutes ?? 0;
  const warm = Math.max(readings.length > 1 ? (readings[1]?.audioMinutes ?? 0) : 0, total / 12);
  const after = readings.filter((r) => r.audioMinutes > warm - 1e-9 && r.audioMinutes > 0);
  const quarter = Math.max(1, Math.floor(after.length / 4));
  const firstQ = after.slice(0, quarter);
  const lastQ = after.slice(after.length - quarter);
  const mean = (rs: readonly MemoryReading[]): number => rs.reduce((n, r) => n + value(r), 0) / Math.max(1, rs.length);
  const first = mean(firstQ);
  const last = mean(lastQ);
  const growth = first > 0 ? last / first - 1 : Number.NaN;
  const span = (rs: readonly MemoryReading[]): readonly [number, number] => [rs[0]?.audioMinutes ?? Number.NaN, rs.at(-1)?.audioMinutes ?? Number.NaN];
  return { first, last, growth, pass: growth <= tolerance, firstSpan: span(firstQ), lastSpan: span(lastQ) };
}
