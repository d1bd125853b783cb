import { createSSRApp, defineComponent, h } from 'vue';
import { renderToString } from 'vue/server-renderer';
import { describe, expect, it } from 'vitest';
import { useLiveCaptions } from '@soundclone/vue';

/** A server render: no window, no microphone, no socket. The composable renders the idle snapshot and asks nothing. */
describe('@soundclone/vue on the server', () => {
  it("vue/server-renderer's renderToString renders the idle state without window and never calls credentials", async () => {
    expect(typeof (globalThis as { window?: unknown }).window).toBe('undefined');
    let asked = 0;
    const Captions = defineComponent(() => {
      const { snapshot } = useLiveCaptions({ credentials: async () => (asked++, { sessionId: 's', token: 't', socketUrl: 'ws://127.0.0.1:1' }), autoStart: true });
      return () => h('section', [h('b', snapshot.value.status), h('span', snapshot.value.reason), ...snapshot.value.lines.map((l) => h('p', { key: l.id }, l.text)), h('i', snapshot.value.partial)]);
    });
    const html = await renderToString(createSSRApp(Captions));
    expect(html).toBe('<section><b>idle</b><span>not started</span><i></i></section>');
    expect(asked).toBe(0);
  });
});
