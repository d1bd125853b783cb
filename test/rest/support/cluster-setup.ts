import type { TestProject } from 'vitest/node';
import { LocalPostgres } from '@soundclone/server';

/**
 * globalSetup of the REST suite's cluster run (vitest.config.ts project `rest-cluster`): one throwaway
 * PostgreSQL for the whole run (initdb once, a few seconds); every cluster a test starts gets a database
 * of its own on it (cluster.ts). Stopped, directory and all, when the run ends.
 */
declare module 'vitest' {
  export interface ProvidedContext {
    /** A connection URL of the run's PostgreSQL (its `postgres` database). */
    clusterPostgres: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await LocalPostgres.start({ fast: true });
  project.provide('clusterPostgres', postgres.url());
  return () => postgres.stop();
}
