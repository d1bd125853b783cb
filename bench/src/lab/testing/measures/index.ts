import type { TestingMeasure } from '../measure.js';
import { measure as virtualHour } from './virtual-hour.js';

/** Every row of bench/results/testing.md, in table order. */
export const measures: readonly TestingMeasure[] = [virtualHour];
