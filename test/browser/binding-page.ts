import type { LiveCaptions } from '@soundclone/web-audio';

/**
 * What each framework's test page puts on `window.bind`: one captions component (the binding's own
 * way: a hook, a composable, a readable store) mounted in #root with the test backend's options, and
 * the counts the lifecycle tests check.
 */
export interface BindingPage {
  mount(options: { readonly autoStart: boolean; readonly strict?: boolean }): void;
  unmount(): void;
  /** The store the mounted component made (set on its first render). */
  store: LiveCaptions | undefined;
  /** Renders (or updates) while mounted, and after the unmount (must stay 0). */
  readonly counts: { renders: number; afterUnmount: number; mounted: boolean; effects: number };
}

export const counts: BindingPage['counts'] = { renders: 0, afterUnmount: 0, mounted: false, effects: 0 };

/** Counts one render or update of the captions view. */
export function rendered(): void {
  if (counts.mounted) counts.renders++;
  else counts.afterUnmount++;
}

export function expose(page: Omit<BindingPage, 'counts' | 'store'>): BindingPage {
  const bind: BindingPage = { ...page, store: undefined, counts };
  (window as unknown as { bind: BindingPage }).bind = bind;
  return bind;
}
