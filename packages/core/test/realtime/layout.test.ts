import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** packages/core/src/realtime/README.md: the session at the top, the helpers in one folder per concern. */
const root = fileURLToPath(new URL('../../src/realtime/', import.meta.url));

function modules(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return modules(full);
    return name.endsWith('.ts') ? [relative(root, full).split('\\').join('/')] : [];
  });
}

/** What only the owner holds: the state machine, the timers, the waits and the emitter. */
const OWNER_ONLY = ['StateMachine', 'TimerSet', 'Waiters', 'GuardedEmitter'];

describe('realtime folder layout', () => {
  it('keeps the session and its vocabulary at the top (at most 8 modules) and a README with its rule in each folder', () => {
    const top = readdirSync(root).filter((name) => name.endsWith('.ts'));
    expect(top).toContain('realtime-session.ts');
    expect(top.length).toBeLessThanOrEqual(8);
    for (const name of readdirSync(root)) {
      if (!statSync(join(root, name)).isDirectory()) continue;
      expect(readFileSync(join(root, name, 'README.md'), 'utf8').trim().split('\n')).toHaveLength(1);
    }
  });

  it('only realtime-session.ts holds the state machine, timers, waits and the emitter (helpers return decisions)', () => {
    const holders = modules(root).filter((path) => {
      const values = readFileSync(join(root, path), 'utf8')
        .split('\n')
        .filter((line) => /^import (?!type )/.test(line))
        .map((line) => line.replace(/\btype \w+/g, ''));
      return values.some((line) => OWNER_ONLY.some((name) => new RegExp(`\\b${name}\\b`).test(line)));
    });
    expect(holders).toEqual(['realtime-session.ts']);
  });
});
