// Components the tests compile (svelte/compiler, or the browser tests' bundler).
declare module '*.svelte' {
  const component: import('svelte').Component<Record<string, unknown>>;
  export default component;
}
