import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compile } from 'svelte/compiler';
import { render } from 'svelte/server';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * A server render: no window, no microphone, no socket. A Svelte 5 component (runes mode) reading the
 * store with `$captions` is compiled for the server here and rendered with svelte/server: the idle
 * snapshot, and credentials never called. The compiled module is written beside this file (so it
 * resolves svelte from this package) and removed after.
 */
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(here, '.ssr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const source = `
<script>
  import { liveCaptions } from '@soundclone/svelte';
  let { credentials } = $props();
  const captions = liveCaptions({ credentials, autoStart: true });
  const count = $derived($captions.lines.length);
</script>
<section><b>{$captions.status}</b><span>{$captions.reason}</span>{#each $captions.lines as line (line.id)}<p>{line.text}</p>{/each}<i>{$captions.partial}</i><u>{count}</u></section>
`;

describe('@soundclone/svelte on the server', () => {
  it("svelte/server's render renders the idle state without window and never calls credentials", async () => {
    expect(typeof (globalThis as { window?: unknown }).window).toBe('undefined');
    const { js } = compile(source, { generate: 'server', runes: true, filename: 'Captions.svelte' });
    const file = join(dir, 'Captions.js');
    writeFileSync(file, js.code);
    // The compiled module's type is not known to TypeScript here: a component taking `credentials`.
    const Captions = ((await import(/* @vite-ignore */ pathToFileURL(file).href)) as { default: import('svelte').Component<{ credentials: () => Promise<unknown> }> }).default;
    let asked = 0;
    const credentials = async (): Promise<{ sessionId: string; token: string; socketUrl: string }> => (asked++, { sessionId: 's', token: 't', socketUrl: 'ws://127.0.0.1:1' });
    const { body } = render(Captions, { props: { credentials } });
    expect(body.replace(/<!--[^>]*-->/g, '')).toBe('<section><b>idle</b><span>not started</span><i></i><u>0</u></section>');
    expect(asked).toBe(0);
  });
});
