import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPostgresBinDir, isLocalPostgresError, LocalPostgres, sweepLeftovers } from '../../src/cluster/local-postgres.js';

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

  it('sweeps the directories of runs whose process is gone, and leaves those of live ones', () => {
    const parent = mkdtempSync(join(tmpdir(), 'pg-sweep-'));
    try {
      // A pid that certainly ran and is gone: a child that has exited.
      const dead = spawnSync(process.execPath, ['-e', '0']).pid as number;
      const leftover = join(parent, 'soundclone-pg-dead');
      const live = join(parent, 'soundclone-pg-live');
      const other = join(parent, 'something-else');
      for (const [dir, owner] of [[leftover, dead], [live, process.pid], [other, dead]] as const) {
        mkdirSync(join(dir, 'data'), { recursive: true });
        writeFileSync(join(dir, 'owner.pid'), `${owner}\n`);
      }
      sweepLeftovers(parent);
      expect([existsSync(leftover), existsSync(live), existsSync(other)]).toEqual([false, true, true]);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
