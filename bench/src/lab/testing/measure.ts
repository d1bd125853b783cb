/**
 * One row of the testing kit's bench table (bench/results/testing.md): a measure in its own file,
 * `measures/<id>.ts`, exporting `measure`, listed in `measures/index.ts`; `run.ts` runs them all.
 */
export interface TestingMeasure {
  readonly id: string;
  readonly label: string;
  run(signal?: AbortSignal): Promise<{ readonly result: string; readonly target?: string; readonly met?: boolean; readonly detail?: string }>;
}
