import type { TestingMeasure } from '../measure.js';
import { measure as determinism } from './determinism.js';
import { measure as readyTime } from './ready-time.js';
import { measure as virtualHour } from './virtual-hour.js';

/** Every row of bench/results/testing.md, in table order. */
export const measures: readonly TestingMeasure[] = [readyTime, determinism, virtualHour];
