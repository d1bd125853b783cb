import { mount, unmount } from 'svelte';
// Compiled by the test's bundler (test/browser/binding-bundle.ts).
import Captions from './Captions.svelte';
import { pageOptions } from '../../../test/browser/live-page.ts';
import { counts, expose, rendered } from '../../../test/browser/binding-page.ts';

/** The lifecycle tests' Svelte page (test/browser/bindings-lifecycle.test.ts): a runes-mode component reading `$captions`. */
let component: ReturnType<typeof mount> | undefined;
const bind = expose({
  mount({ autoStart }) {
    counts.mounted = true;
    component = mount(Captions, {
      target: document.getElementById('root')!,
      props: { options: { ...pageOptions, autoStart }, onstore: (store: unknown) => (bind.store = store as typeof bind.store), onrender: rendered },
    });
  },
  unmount() {
    if (component !== undefined) void unmount(component);
    counts.mounted = false;
  },
});
