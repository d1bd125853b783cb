import { describe, expect, it } from 'vitest';
import { StateMachine, TERMINAL_STATES, TRANSITIONS, type SessionState, type StateChange } from '../../src/realtime/session-state.js';

describe('StateMachine', () => {
  it('emits old state, new state and reason once per change', () => {
    const changes: StateChange[] = [];
    const m = new StateMachine((c) => changes.push(c));
    expect(m.set('connecting', 'connect()')).toBe(true);
    expect(m.set('streaming', 'session.ready')).toBe(true);
    expect(m.set('streaming', 'again')).toBe(true); // same state: no event
    expect(m.set('rotating', 'usage.updated rotate')).toBe(true);
    expect(changes).toEqual([
      { from: 'idle', to: 'connecting', reason: 'connect()' },
      { from: 'connecting', to: 'streaming', reason: 'session.ready' },
      { from: 'streaming', to: 'rotating', reason: 'usage.updated rotate' },
    ]);
  });

  it('refuses transitions the table forbids, so a late callback cannot revive a finished session', () => {
    const changes: StateChange[] = [];
    const m = new StateMachine((c) => changes.push(c));
    expect(m.set('streaming', 'too early')).toBe(false);
    m.set('connecting', 'a');
    m.set('streaming', 'b');
    m.set('finishing', 'c');
    expect(m.set('streaming', 'late ack')).toBe(false);
    m.set('finished', 'd');
    expect(m.terminal).toBe(true);
    for (const next of Object.keys(TRANSITIONS) as SessionState[]) expect(m.set(next, 'after the end')).toBe(next === 'finished');
    expect(changes.map((c) => c.to)).toEqual(['connecting', 'streaming', 'finishing', 'finished']);
  });

  it('has a table where every live state can fail and reach reconnecting or finishing, and terminal states lead nowhere', () => {
    for (const [state, next] of Object.entries(TRANSITIONS) as Array<[SessionState, readonly SessionState[]]>) {
      if (TERMINAL_STATES.includes(state)) {
        expect(next).toEqual([]);
        continue;
      }
      expect(next).toContain('failed');
      expect(next).toContain('closed'); // close() works from every live state
      if (state !== 'idle') expect(next.includes('reconnecting') || state === 'reconnecting').toBe(true);
      if (state !== 'idle' && state !== 'finishing') expect(next).toContain('finishing');
    }
    expect(TERMINAL_STATES).toEqual(['finished', 'closed', 'failed']);
    // Rotation and pause come back to streaming.
    expect(TRANSITIONS.rotating).toContain('streaming');
    expect(TRANSITIONS.paused).toContain('streaming');
    expect(TRANSITIONS.reconnecting).toEqual(expect.arrayContaining(['streaming', 'rotating', 'paused', 'finishing']));
  });
});
