import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as core from '../../src/index.js';
import * as internal from '../../src/internal.js';

/**
 * The main entry holds what an application calls; the rest is in ./internal, which promises nothing
 * (packages/core/README.md). Each runtime value here is a compatibility promise, so the count is kept
 * small on purpose and a new one is a decision, not an accident.
 */
const MOST_RUNTIME_VALUES = 45;

describe('the public entry', () => {
  it(`holds at most ${MOST_RUNTIME_VALUES} runtime values, among them the session, its encode path and the one error guard`, () => {
    const names = Object.keys(core);
    expect(names.length).toBeLessThanOrEqual(MOST_RUNTIME_VALUES);
    for (const name of ['SoundClone', 'RealtimeSocketSession', 'FrameEncoder', 'Resampler', 'attachCaptions', 'verifyWebhook', 'isSoundCloneError']) {
      expect(names).toContain(name);
    }
  });

  it('has one error guard: no per-class guard, and every error class it exports is one isSoundCloneError() takes', () => {
    expect(Object.keys(core).filter((n) => /^is.*Error$/.test(n))).toEqual(['isSoundCloneError']);
    const classes = Object.entries(core).filter(([n]) => /Error$/.test(n) && n !== 'isSoundCloneError');
    expect(classes.length).toBeGreaterThan(20);
    for (const [name, Class] of classes) {
      // A foreign copy's instance: a plain Error carrying the class's name and a code.
      const foreign = Object.assign(new Error('x'), { name, code: 'SOME_CODE' });
      expect(core.isSoundCloneError(foreign, Class as typeof core.SoundCloneError), name).toBe(true);
      expect(core.isSoundCloneError(foreign), name).toBe(true);
    }
  });

  it('leaves the wire tables, defaults tables and helpers no application calls to ./internal', () => {
    for (const name of ['TASK_STATUSES', 'SERVER_MESSAGES', 'CLOSE_CLASSES', 'UPGRADE_CLASSES', 'classifyLoss', 'ACK_WATCH', 'QUALITY_PRESETS', 'vttCueBlock', 'redact', 'RingSegments', 'CueSequencer', 'ReplayCache', 'encodePcm16Into']) {
      expect(name in core, name).toBe(false);
      expect(name in internal || name in internal.protocol, name).toBe(true);
    }
  });

  it('exports no EncodePipeline, and no README or example shows a framer other than the session\'s', () => {
    expect('EncodePipeline' in core).toBe(false);
    const root = resolve(import.meta.dirname, '../../../..');
    for (const file of ['README.md', 'packages/core/README.md', 'bench/README.md', 'docs/errors.md']) {
      expect(readFileSync(resolve(root, file), 'utf8'), file).not.toMatch(/EncodePipeline|\bis(Api|NotFound|Realtime|Dsp|Caption)Error\b/);
    }
  });
});
