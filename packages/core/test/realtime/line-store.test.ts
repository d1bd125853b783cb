import { describe, expect, it } from 'vitest';
import { LineStore, MAX_EARLY_LINES } from '../../src/realtime/transcript/line-store.js';
import type { WireLine } from '../../src/realtime/messages/server-messages.js';

const wire = (id: string, extra: Partial<WireLine> = {}): WireLine => ({
  id, text: `text ${id}`, revisedText: null, languageCode: null, languageProbability: null, entities: [], words: [], characterAlignments: [],
  pendingSupplements: ['alignment', 'language'], ...extra,
});

describe('LineStore: each line once, then updated', () => {
  it('emits a line once; a repeat is no line, and an unchanged repeat is no update either', () => {
    const store = new LineStore();
    expect(store.add(wire('line_0001')).line?.id).toBe('line_0001');
    expect(store.add(wire('line_0001'))).toEqual({});
    expect(store.size).toBe(1);
  });

  it('applies supplements as updates and clears them from pendingSupplements', () => {
    const store = new LineStore();
    store.add(wire('l1'));
    const a = store.supplement({ type: 'transcript.alignment', lineId: 'l1', words: [{ text: 'a' }], characterAlignments: [] });
    expect(a).toMatchObject({ supplement: 'alignment', line: { words: [{ text: 'a' }], pendingSupplements: ['language'] } });
    const l = store.supplement({ type: 'transcript.language', lineId: 'l1', languageCode: 'en', languageProbability: 0.9 });
    expect(l?.line).toMatchObject({ languageCode: 'en', languageProbability: 0.9, pendingSupplements: [] });
  });

  it('keeps a supplement that arrives before its line and applies it when the line comes', () => {
    const store = new LineStore();
    expect(store.supplement({ type: 'transcript.entities', lineId: 'l2', entities: [] })).toBeUndefined();
    const { line } = store.add(wire('l2', { pendingSupplements: ['entities'] }));
    expect(line?.pendingSupplements).toEqual([]);
  });

  it('turns a reconnect view that filled fields in into one resync update, not a second line', () => {
    const store = new LineStore();
    store.add(wire('l3'));
    const { line, update } = store.add(wire('l3', { languageCode: 'de', words: [{ text: 'x' }], pendingSupplements: [] }));
    expect(line).toBeUndefined();
    expect(update).toMatchObject({ supplement: 'resync', line: { languageCode: 'de', pendingSupplements: [] } });
    expect(store.all().map((x) => x.id)).toEqual(['l3']);
  });

  it('bounds supplements waiting for lines that never come: oldest ids go first, one per kind per line', () => {
    const store = new LineStore();
    for (let i = 0; i < MAX_EARLY_LINES * 20; i++) {
      for (let repeat = 0; repeat < 3; repeat++) store.supplement({ type: 'transcript.language', lineId: `ghost_${i}`, languageCode: 'en', languageProbability: repeat / 3 });
    }
    expect(store.earlyLines).toBe(MAX_EARLY_LINES);
    // The newest waiting id is still applied when its line comes (the last of the repeats wins) ...
    const last = store.add(wire(`ghost_${MAX_EARLY_LINES * 20 - 1}`, { pendingSupplements: ['language', 'alignment'] })).line;
    expect(last).toMatchObject({ languageCode: 'en', languageProbability: 2 / 3, pendingSupplements: ['alignment'] });
    expect(store.earlyLines).toBe(MAX_EARLY_LINES - 1);
    // ... an evicted one is not (its supplement is simply missing, as if never sent).
    const first = store.add(wire('ghost_0', { pendingSupplements: ['language'] })).line;
    expect(first).toMatchObject({ languageCode: null, pendingSupplements: ['language'] });
  });
});
