import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADDRESS_FILE, publishAddress, readAddress, removeAddress } from '../src/local-server/address-file.js';
import { BORROWERS_DIR, liveBorrowers, registerBorrower } from '../src/local-server/borrowers.js';

/** A pid that surely ended: a child of ours that exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => child.once('exit', r));
  return child.pid as number;
}

describe('the local server\'s address file and its borrowers', () => {
  let dir: string;
  beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), 'cli-address-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('publishes by rename (no temp file left, mode 0600) and reads back a live loopback server', () => {
    publishAddress(dir, { url: 'http://127.0.0.1:4321', pid: process.pid, recognizer: 'energy-v1' });
    expect(readdirSync(dir)).toEqual([ADDRESS_FILE]);
    expect(statSync(join(dir, ADDRESS_FILE)).mode & 0o777).toBe(0o600);
    expect(readAddress(dir)).toEqual({ url: 'http://127.0.0.1:4321', pid: process.pid, recognizer: 'energy-v1' });
    removeAddress(dir);
    expect(existsSync(join(dir, ADDRESS_FILE))).toBe(false);
  });

  it('never publishes nor reads an address off loopback', () => {
    expect(() => publishAddress(dir, { url: 'http://0.0.0.0:4321', pid: process.pid, recognizer: 'x' })).toThrow(TypeError);
    for (const url of ['http://192.0.2.1:8787', 'https://127.0.0.1:1', 'http://127.0.0.1:1/x', 'http://localhost:1']) {
      writeFileSync(join(dir, ADDRESS_FILE), JSON.stringify({ url, pid: process.pid, recognizer: 'x' }));
      expect(readAddress(dir), url).toBeUndefined();
    }
  });

  it('ignores a stale (dead pid) or damaged file; a new publish replaces it', async () => {
    const gone = await deadPid();
    writeFileSync(join(dir, ADDRESS_FILE), JSON.stringify({ url: 'http://127.0.0.1:1', pid: gone, recognizer: 'x' }));
    expect(readAddress(dir)).toBeUndefined();
    writeFileSync(join(dir, ADDRESS_FILE), '{"url":"http://127.0.0.1:1","pi');
    expect(readAddress(dir)).toBeUndefined();
    publishAddress(dir, { url: 'http://127.0.0.1:2', pid: process.pid, recognizer: 'x' });
    expect(readAddress(dir)?.url).toBe('http://127.0.0.1:2');
  });

  it('removes only its own address, never a newer holder\'s', () => {
    publishAddress(dir, { url: 'http://127.0.0.1:2', pid: process.pid, recognizer: 'x' });
    removeAddress(dir, process.pid + 1);
    expect(JSON.parse(readFileSync(join(dir, ADDRESS_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('lists live borrowers once each, removes the marks of dead ones, and a release removes its own', async () => {
    expect(liveBorrowers(dir)).toEqual([]);
    const a = registerBorrower(dir);
    const b = registerBorrower(dir);
    const gone = await deadPid();
    registerBorrower(dir, gone);
    expect(liveBorrowers(dir)).toEqual([process.pid]);
    expect(readdirSync(join(dir, BORROWERS_DIR))).toHaveLength(2);
    a.release();
    a.release();
    expect(liveBorrowers(dir)).toEqual([process.pid]);
    b.release();
    expect(liveBorrowers(dir)).toEqual([]);
    expect(readdirSync(join(dir, BORROWERS_DIR))).toEqual([]);
  });
});
