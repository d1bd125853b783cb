import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as kit from '@soundclone/testing';

/**
 * The README's first test runs as written: its code block is taken from the file, its imports dropped,
 * and its `test(name, body)` handed a `test` that runs the body with vitest's `expect` and the kit.
 */
const readme = readFileSync(resolve(import.meta.dirname, '../README.md'), 'utf8');
const first = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

describe('README', () => {
  it('shows a first test in ten lines', () => {
    expect(first).toContain("from '@soundclone/testing'");
    expect(first.trimEnd().split('\n').length).toBeLessThanOrEqual(10);
  });

  it('runs its first test as written', async () => {
    const body = first.split('\n').filter((line) => !line.startsWith('import ')).join('\n');
    const bodies: Array<() => Promise<void>> = [];
    let assertions = 0;
    const counting = ((value: unknown) => {
      assertions += 1;
      return expect(value);
    }) as typeof expect;
    const test = (_name: string, fn: () => Promise<void>): void => void bodies.push(fn);
    const AsyncFunction = (async () => undefined).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<void>;
    await new AsyncFunction('test', 'expect', 'startTestServer', 'scriptAudio', body)(test, counting, kit.startTestServer, kit.scriptAudio);
    expect(bodies).toHaveLength(1);
    await bodies[0]?.();
    expect(assertions).toBe(1);
  });
});
