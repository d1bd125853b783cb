import { describe, expect, it } from 'vitest';
import { stateLine } from '../src/commands/captions.js';

describe('captions status lines for people', () => {
  it('name states in plain words and drop the session-internal reasons', () => {
    expect(stateLine({ from: 'streaming', to: 'finishing', reason: 'finish()' })).toBe('finishing: sending the last audio, waiting for the final transcript');
    expect(stateLine({ from: 'finishing', to: 'finished', reason: 'finished' })).toBe('finished');
    expect(stateLine({ from: 'connecting', to: 'streaming', reason: 'session.ready' })).toBe('streaming');
    expect(stateLine({ from: 'reconnecting', to: 'streaming', reason: 'reconnected' })).toBe('streaming again');
    expect(stateLine({ from: 'streaming', to: 'closed', reason: 'close()' })).toBe('closed');
  });

  it('a failure keeps its reason: that is the line a person acts on', () => {
    expect(stateLine({ from: 'reconnecting', to: 'failed', reason: 'reconnect gave up: socket closed 1006' })).toBe('failed: reconnect gave up: socket closed 1006');
  });
});
