import { createElement as h, StrictMode } from 'react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { useLiveCaptions } from '@soundclone/react';

/** A server render: no window, no microphone, no socket. The hook renders the idle snapshot and asks nothing. */
describe('@soundclone/react on the server', () => {
  it('renderToString renders the idle state without window and never calls credentials', () => {
    expect(typeof (globalThis as { window?: unknown }).window).toBe('undefined');
    let asked = 0;
    function Captions(): ReturnType<typeof h> {
      const c = useLiveCaptions({ credentials: async () => (asked++, { sessionId: 's', token: 't', socketUrl: 'ws://127.0.0.1:1' }), autoStart: true });
      return h('section', null, h('b', null, c.status), h('span', null, c.reason), ...c.lines.map((l) => h('p', { key: l.id }, l.text)), h('i', null, c.partial));
    }
    const html = renderToString(h(StrictMode, null, h(Captions)));
    expect(html).toBe('<section><b>idle</b><span>not started</span><i></i></section>');
    expect(asked).toBe(0);
  });
});
