import { createElement as h, StrictMode, useEffect, type ReactElement } from 'react';
import { flushSync } from 'react-dom';
import { createRoot, type Root } from 'react-dom/client';
import { useLiveCaptions } from '../src/index.ts';
import { pageOptions } from '../../../test/browser/live-page.ts';
import { counts, expose, rendered } from '../../../test/browser/binding-page.ts';

/** The lifecycle tests' React page (test/browser/bindings-lifecycle.test.ts): the hook in a component, StrictMode or not. */
function Captions({ autoStart }: { autoStart: boolean }): ReactElement {
  const c = useLiveCaptions({ ...pageOptions, autoStart });
  bind.store = c.store;
  rendered();
  // Mount effects run: twice under StrictMode in development (mount, unmount, mount again).
  useEffect(() => void counts.effects++, []);
  return h('div', { id: 'captions' }, h('b', null, c.status), h('span', null, c.reason), ...c.lines.map((l) => h('p', { key: l.id }, l.text)), h('i', null, c.partial));
}

let root: Root | undefined;
const bind = expose({
  mount({ autoStart, strict = false }) {
    counts.mounted = true;
    root = createRoot(document.getElementById('root')!);
    const app = h(Captions, { autoStart });
    flushSync(() => root!.render(strict ? h(StrictMode, null, app) : app));
  },
  unmount() {
    root?.unmount();
    counts.mounted = false;
  },
});
