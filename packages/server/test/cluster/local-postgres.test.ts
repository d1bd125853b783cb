import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPostgresBinDir, isLocalPostgresError, LocalPostgres } from '../../src/cluster/local-postgres.js';

/**
 * The throwaway PostgreSQL launcher's refusal. Its running path (initdb, start as the postgres user
 * when root, halt, resume, stop) is exercised by every PostgreSQL test through test/support/postgres.ts.
 */
describe('LocalPostgres', () => {
  it('finds the installed binaries (this machine has PostgreSQL; setup.sh installs it)', () => {
    expect(findPostgresBinDir()).toMatch(/bin$/);
  });

  it('without initdb and postgres: LocalPostgresError POSTGRES_NOT_INSTALLED naming where it looked, nothing left behind', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-postgres-'));
    try {
      const error = await LocalPostgres.start({ binDir: empty, parentDir: empty }).catch((e: unknown) => e);
      expect(isLocalPostgresError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'POSTGRES_NOT_INSTALLED', message: expect.stringContaining(empty) });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
