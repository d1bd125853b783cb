import { createApp, defineComponent, h, onUpdated, type App } from 'vue';
import { useLiveCaptions } from '../src/index.ts';
import { pageOptions } from '../../../test/browser/live-page.ts';
import { counts, expose, rendered } from '../../../test/browser/binding-page.ts';

/** The lifecycle tests' Vue page (test/browser/bindings-lifecycle.test.ts): the composable in a component. */
const Captions = defineComponent({
  props: { autoStart: { type: Boolean, required: true } },
  setup(props) {
    const { snapshot, store } = useLiveCaptions({ ...pageOptions, autoStart: props.autoStart });
    bind.store = store;
    rendered();
    onUpdated(rendered);
    return () => h('div', { id: 'captions' }, [h('b', snapshot.value.status), h('span', snapshot.value.reason), ...snapshot.value.lines.map((l) => h('p', { key: l.id }, l.text)), h('i', snapshot.value.partial)]);
  },
});

let app: App | undefined;
const bind = expose({
  mount({ autoStart }) {
    counts.mounted = true;
    app = createApp(Captions, { autoStart });
    app.mount('#root');
  },
  unmount() {
    app?.unmount();
    counts.mounted = false;
  },
});
