import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * SSRF refusals, run where no packet can leave: the script runs in a fresh network namespace
 * (`unshare -n`, only loopback up; needs root, `unshare` and `ip`). Refused destinations must answer
 * DESTINATION_NOT_ALLOWED without any connection (the victim host on loopback sees nothing); addresses
 * that pass the policy but cannot be reached answer SOURCE_UNREACHABLE, so a refusal is told apart from
 * an unreachable host. The script imports the built server (dist), built here first.
 */
const serverDir = fileURLToPath(new URL('..', import.meta.url));
const script = fileURLToPath(new URL('./support/ssrf-namespace-script.mjs', import.meta.url));

interface Report {
  refusedCount: number;
  results: Array<{ mediaUrl: string; status: number; errorCode: string; details: { reason: string; refusal?: string; cause?: string }; ms: number }>;
  victimHits: string[];
  deliveries: Array<{ url: string; outcome: string; attempts: number }>;
  submitRefusals: Array<{ notifyUrl: string; status: number; errorCode: string; reason: string }>;
}

describe('mediaUrl and notifyUrl refusals in a private network namespace', () => {
  let report: Report;
  beforeAll(() => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-b', serverDir], { stdio: 'pipe' });
    const run = spawnSync('unshare', ['-n', 'sh', '-c', `ip link set lo up && exec "${process.execPath}" "${script}"`], { encoding: 'utf8', timeout: 60_000 });
    if (run.status !== 0) throw new Error(`namespace run failed (${run.status}): ${run.stderr}`);
    report = JSON.parse(run.stdout) as Report;
  }, 90_000);

  it('refuses every private, loopback, link-local, unique-local and metadata spelling with DESTINATION_NOT_ALLOWED', () => {
    const refused = report.results.slice(0, report.refusedCount);
    expect(refused.length).toBeGreaterThan(40);
    for (const r of refused) {
      expect({ url: r.mediaUrl, status: r.status, errorCode: r.errorCode, reason: r.details?.reason }).toEqual({
        url: r.mediaUrl, status: 422, errorCode: 'MEDIA_FETCH_FAILED', reason: 'DESTINATION_NOT_ALLOWED',
      });
    }
    const kinds = new Set(refused.map((r) => r.details.refusal));
    for (const kind of ['loopback', 'private', 'link-local', 'cloud-metadata', 'unique-local', 'unspecified', 'multicast', 'shared-address-space']) expect(kinds).toContain(kind);
  });

  it('never connected to the victim host on loopback', () => {
    expect(report.victimHits).toEqual([]);
  });

  it('tells unreachable hosts apart: SOURCE_UNREACHABLE, not a refusal', () => {
    const unreachable = report.results.slice(report.refusedCount);
    expect(unreachable).toHaveLength(2);
    for (const r of unreachable) expect(r.details.reason).toBe('SOURCE_UNREACHABLE');
  });

  it('refuses a literal refused notifyUrl at submit with details.reason DESTINATION_NOT_ALLOWED', () => {
    expect(report.submitRefusals).toHaveLength(5);
    for (const r of report.submitRefusals) expect(r).toMatchObject({ status: 400, errorCode: 'INPUT_INVALID', reason: 'DESTINATION_NOT_ALLOWED' });
  });

  it('refuses a webhook host name that resolves to a refused address when it connects, without retrying', () => {
    expect(report.deliveries).toHaveLength(2);
    for (const d of report.deliveries) expect(d).toMatchObject({ outcome: 'refused', attempts: 1 });
  });
});
