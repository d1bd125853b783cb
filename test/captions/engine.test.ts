import { describe, expect, it } from 'vitest';
import { CAPTION_DEFAULTS, CaptionEngine, CaptionError, isSoundCloneError, type CueChange } from '@soundclone/core';
import { finalWords, latestFinal, line } from './support.js';

describe('caption engine: stable prefix', () => {
  it('shows a partial word only after it survived K further partials', () => {
    const e = new CaptionEngine({ stableUpdates: 2, stableMs: 60_000 });
    expect(e.partial({ epoch: 1, text: 'the' }, 0)).toEqual([]);
    expect(e.partial({ epoch: 1, text: 'the cat' }, 10)).toEqual([]);
    const third = e.partial({ epoch: 1, text: 'the cat sat' }, 20);
    expect(third.map((c) => [c.kind, c.cue.text])).toEqual([['live', 'the']]);
    const fourth = e.partial({ epoch: 1, text: 'the cat sat down' }, 30);
    expect(fourth.map((c) => c.cue.text)).toEqual(['the cat']);
    expect(fourth[0]?.cue.final).toBe(false);
  });

  it('shows a word once unchanged for T ms, on tick, and says when to wake', () => {
    const e = new CaptionEngine({ stableUpdates: 100, stableMs: 300 });
    e.partial({ epoch: 1, text: 'hello there' }, 1000);
    expect(e.nextWakeMs()).toBe(1300);
    expect(e.tick(1299)).toEqual([]);
    const shown = e.tick(1300);
    expect(shown.map((c) => c.cue.text)).toEqual(['hello there']);
    expect(e.nextWakeMs()).toBeNull();
  });

  it('a word that flips back and forth is never shown, and a shown word is held while its replacement is unstable', () => {
    const e = new CaptionEngine({ stableUpdates: 2, stableMs: 60_000 });
    const shown: string[] = [];
    const record = (cs: CueChange[]): void => cs.forEach((c) => shown.push(c.cue.text));
    for (let i = 0; i < 6; i++) record(e.partial({ epoch: 1, text: i % 2 === 0 ? 'we red' : 'we read' }, i));
    expect(shown.every((t) => !t.includes('red') && !t.includes('read'))).toBe(true);
    expect(shown.at(-1)).toBe('we');
    // Now "read" settles and is shown; a later flip to "red" keeps "read" on screen.
    record(e.partial({ epoch: 1, text: 'we read' }, 10));
    record(e.partial({ epoch: 1, text: 'we read' }, 11));
    expect(shown.at(-1)).toBe('we read');
    const flip = e.partial({ epoch: 1, text: 'we red' }, 12);
    expect(flip).toEqual([]);
  });

  it('the unstable tail rides along apart with unstableTail "separate"', () => {
    const e = new CaptionEngine({ stableUpdates: 1, stableMs: 60_000, unstableTail: 'separate' });
    e.partial({ epoch: 1, text: 'one' }, 0);
    const c = e.partial({ epoch: 1, text: 'one two' }, 1);
    expect(c.at(-1)?.cue.text).toBe('one');
    expect(c.at(-1)?.cue.tail).toBe('two');
  });

  it('a stale epoch partial is ignored, a new epoch starts over', () => {
    const e = new CaptionEngine({ stableUpdates: 0 });
    expect(e.partial({ epoch: 2, text: 'new words' }, 0).at(-1)?.cue.text).toBe('new words');
    expect(e.partial({ epoch: 1, text: 'old stuff here' }, 1)).toEqual([]);
    expect(e.partial({ epoch: 3, text: 'fresh' }, 2).at(-1)?.cue.text).toBe('fresh');
  });
});

describe('caption engine: final cues, layout, reading rate', () => {
  it('breaks a line into cues of at most N lines of M characters at word boundaries, with a final cue replacing the live one', () => {
    const e = new CaptionEngine({ maxLines: 2, maxLineChars: 20, stableUpdates: 0 });
    const live = e.partial({ epoch: 1, text: 'alpha beta' }, 0);
    expect(live[0]?.cue.id).toBe('cue_0001');
    const words = 'the quick brown fox jumps over the lazy dog and keeps running far away from here'.split(' ');
    const changes = e.line(line('line_0001', words.join(' '), 0, 6000));
    const finals = changes.filter((c) => c.kind === 'final').map((c) => c.cue);
    expect(finals[0]?.id).toBe('cue_0001');
    expect(finals.length).toBeGreaterThan(1);
    for (const cue of finals) {
      expect(cue.lines.length).toBeLessThanOrEqual(2);
      for (const l of cue.lines) expect(l.length).toBeLessThanOrEqual(20);
      expect(cue.final).toBe(true);
    }
    expect(finalWords(finals)).toEqual(words);
  });

  it('a word longer than a line stands alone, never cut', () => {
    const e = new CaptionEngine({ maxLineChars: 10, maxLines: 1, maxDurationMs: 7000, maxCharsPerSecond: 17 });
    const cues = latestFinal(e.line(line('l1', 'a supercalifragilistic b', 0, 3000)));
    expect(finalWords(cues)).toEqual(['a', 'supercalifragilistic', 'b']);
    expect(cues.map((c) => c.text)).toEqual(['a', 'supercalifragilistic', 'b']);
  });

  it('cues last at least their reading time and minDuration, at most maxDuration, and never overlap', () => {
    const e = new CaptionEngine({ maxCharsPerSecond: 10, minDurationMs: 1000, maxDurationMs: 5000 });
    const changes = [
      ...e.line(line('l1', 'ok', 0, 100)),
      ...e.line(line('l2', 'a rather longer line of text here', 200, 700)),
      ...e.line(line('l3', 'end', 800, 900)),
    ];
    const cues = latestFinal(changes);
    let previousEnd = 0;
    for (const cue of cues) {
      const duration = cue.endMs - cue.startMs;
      expect(duration).toBeGreaterThanOrEqual(1000);
      expect(duration).toBeLessThanOrEqual(5000);
      expect(cue.text.replace(/\n/gu, ' ').length / (duration / 1000)).toBeLessThanOrEqual(10);
      expect(cue.startMs).toBeGreaterThanOrEqual(previousEnd);
      previousEnd = cue.endMs;
    }
    expect(cues[0]).toMatchObject({ startMs: 0, endMs: 1000 });
  });

  it('a cue closes when its words span more than maxDuration', () => {
    const e = new CaptionEngine({ maxDurationMs: 3000, maxLineChars: 42, maxCharsPerSecond: 17 });
    const cues = latestFinal(e.line(line('l1', 'one two three four', 0, 8000)));
    expect(cues.length).toBeGreaterThan(1);
    for (const c of cues) expect(c.endMs - c.startMs).toBeLessThanOrEqual(3000);
  });
});

describe('caption engine: revisions and exactness', () => {
  it('alignment re-times the same cues; a revisedText re-emits the same ids, never new ones', () => {
    const e = new CaptionEngine({ maxLineChars: 12, maxLines: 1 });
    const first = e.line(line('l1', 'alpha beta gamma delta', 1000, 3000, { pendingSupplements: ['alignment', 'revision'] }));
    const ids = first.map((c) => c.cue.id);
    expect(first.every((c) => c.kind === 'final' && !c.cue.settled)).toBe(true);
    const aligned = e.lineUpdated(line('l1', 'alpha beta gamma delta', 1000, 3000, {
      pendingSupplements: ['revision'],
      words: [{ text: 'alpha', startMs: 1100, endMs: 1400 }, { text: 'beta', startMs: 1500, endMs: 1800 }, { text: 'gamma', startMs: 2000, endMs: 2400 }, { text: 'delta', startMs: 2500, endMs: 2900 }],
    }));
    expect(aligned.length).toBeGreaterThan(0);
    expect(aligned.every((c) => c.kind === 'revised' && ids.includes(c.cue.id))).toBe(true);
    expect(aligned[0]?.cue.startMs).toBe(1100);
    const revised = e.lineUpdated(line('l1', 'alpha beta gamma delta', 1000, 3000, { revisedText: 'Alpha, beta.', pendingSupplements: [] }));
    expect(revised.every((c) => c.kind === 'revised' && ids.includes(c.cue.id))).toBe(true);
    const cues = e.cues();
    expect(cues.map((c) => c.id)).toEqual([...new Set(ids)]);
    expect(finalWords(cues)).toEqual(['Alpha,', 'beta.']);
    expect(cues.every((c) => c.settled)).toBe(true);
    expect(cues[0]?.revision).toBeGreaterThanOrEqual(2);
  });

  it('a line seen again (a reconnect view) is an update, never new cues; supplements that change nothing emit nothing', () => {
    const e = new CaptionEngine();
    e.line(line('l1', 'hello world', 0, 1000));
    expect(e.line(line('l1', 'hello world', 0, 1000))).toEqual([]);
    expect(e.lineUpdated(line('l1', 'hello world', 0, 1000, { entities: [] }))).toEqual([]);
    expect(e.cues().length).toBe(1);
  });

  it('final words equal the lines in order across pauses, rotations (new epochs) and an empty line', () => {
    const e = new CaptionEngine({ stableUpdates: 0 });
    const all: CueChange[] = [];
    const texts = ['good morning everyone', '', 'we begin with the weather report for the northern half of the country', 'rain later'];
    let t = 0;
    texts.forEach((text, i) => {
      const epoch = i + 1;
      all.push(...e.partial({ epoch, text: `${text} maybe` }, t));
      all.push(...e.line({ ...line(`line_${String(i)}`, text, t, t + 2000), epoch }));
      t += 2500;
    });
    all.push(...e.end());
    expect(finalWords(latestFinal(all))).toEqual(texts.flatMap((x) => x.split(' ').filter((w) => w !== '')));
    // Every live cue that no final cue replaced was removed.
    const live = new Set<string>();
    for (const c of all) {
      if (c.kind === 'live') live.add(c.cue.id);
      if (c.kind === 'removed' || c.kind === 'final') live.delete(c.cue.id);
    }
    expect([...live]).toEqual([]);
  });

  it('an empty session has no cues; end() settles everything and input after it is refused', () => {
    const e = new CaptionEngine();
    expect(e.end()).toEqual([]);
    expect(e.cues()).toEqual([]);
    expect(() => e.partial({ epoch: 1, text: 'x' }, 0)).toThrow(CaptionError);
    const f = new CaptionEngine();
    f.line(line('l1', 'pending words', 0, 1000, { pendingSupplements: ['alignment'] }));
    const ended = f.end();
    expect(ended.map((c) => [c.kind, c.cue.settled])).toEqual([['revised', true]]);
  });
});

describe('caption options', () => {
  it('documented defaults; bad values and contradictions are typed errors', () => {
    expect(new CaptionEngine().options).toEqual(CAPTION_DEFAULTS);
    for (const bad of [{ maxLines: 0 }, { maxLineChars: 3.5 }, { maxCharsPerSecond: Number.NaN }, { minDurationMs: 5000, maxDurationMs: 4000 }, { maxDurationMs: 1000 }, { unstableTail: 'blink' }, { colour: 'red' }]) {
      let caught: unknown;
      try {
        new CaptionEngine(bad as never);
      } catch (error) {
        caught = error;
      }
      expect(isSoundCloneError(caught, CaptionError)).toBe(true);
      expect((caught as CaptionError).code).toBe('CAPTIONS_INVALID_OPTION');
    }
  });
});

describe('caption engine: live cue on screen', () => {
  it('one live cue at a time: when the partial outgrows the box the next id takes over and the old one is removed', () => {
    const e = new CaptionEngine({ stableUpdates: 0, maxLines: 1, maxLineChars: 12 });
    const a = e.partial({ epoch: 1, text: 'one two' }, 0);
    expect(a.map((c) => [c.kind, c.cue.id, c.cue.text])).toEqual([['live', 'cue_0001', 'one two']]);
    const b = e.partial({ epoch: 1, text: 'one two three four' }, 1);
    expect(b.map((c) => [c.kind, c.cue.id])).toEqual([['removed', 'cue_0001'], ['live', 'cue_0002']]);
    expect(e.liveWords()).toEqual(['one', 'two', 'three', 'four']);
    const done = e.line(line('l1', 'one two three four', 0, 2000));
    expect(done.map((c) => [c.kind, c.cue.id])).toEqual([['final', 'cue_0001'], ['final', 'cue_0002']]);
    expect(e.liveWords()).toEqual([]);
  });

  it('a late line of an older epoch keeps the current partial on screen under a new id, never removing a final cue', () => {
    const e = new CaptionEngine({ stableUpdates: 0 });
    e.line({ ...line('l1', 'first line', 0, 1000), epoch: 1 });
    e.partial({ epoch: 3, text: 'words now' }, 5);
    const late = e.line({ ...line('l2', 'late line', 1000, 2000), epoch: 2 });
    expect(late.map((c) => [c.kind, c.cue.id, c.cue.final])).toEqual([['removed', 'cue_0002', false], ['final', 'cue_0002', true], ['live', 'cue_0003', false]]);
    expect(e.liveWords()).toEqual(['words', 'now']);
    expect(finalWords(e.cues())).toEqual(['first', 'line', 'late', 'line']);
  });
});
