import { createElement as h, StrictMode, type ReactElement } from 'react';
import { flushSync } from 'react-dom';
import { createRoot, type Root } from 'react-dom/client';
import type { LiveCaptions } from '@soundclone/web-audio';
import { useLiveCaptions } from '../src/index.ts';
import { pageOptions } from '../../../test/browser/live-page.ts';

/**
 * The seeded race test's page (test/browser/bindings-race.test.ts): `lanes` React roots run random
 * sequences of mount, unmount, start, stop, device loss and socket cut at random intervals (mostly a
 * few ms, a share `longGap` of them 300-800 ms),
 * each sequence ending with its component unmounted and its store stopped by that unmount. What was
 * seen is counted for the test: renders after an unmount, stores the unmount did not stop, errors.
 */
export type RaceOp = 'mount' | 'unmount' | 'start' | 'stop' | 'device-loss' | 'socket-cut';

export interface RaceReport {
  readonly sequences: number;
  readonly ops: Record<RaceOp, number>;
  /** Renders of a component after its root was unmounted (React's "state update on an unmounted component"). */
  readonly rendersAfterUnmount: number;
  /** Stores whose component was unmounted but which were not stopping 50 ms later. */
  readonly notStoppedByUnmount: number;
  readonly statuses: Record<string, number>;
  /** Sequences whose store went live at least once (captions flowing before the faults and the unmount). */
  readonly wentLive: number;
  readonly errors: string[];
}

/** mulberry32: a small seeded generator, so a failing run is replayed from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Lane {
  root: Root | undefined;
  mounted: boolean;
  store: LiveCaptions | undefined;
  /** Every store the lane's components made in this sequence (a remount makes another). */
  readonly stores: Set<LiveCaptions>;
}

const sockets: WebSocket[] = [];
const NativeWebSocket = window.WebSocket;
window.WebSocket = class extends NativeWebSocket {
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args);
    sockets.push(this);
  }
};

async function race(options: { seed: number; sequences: number; lanes: number; maxOps: number; maxGapMs: number; longGap: number }): Promise<RaceReport> {
  const ops: Record<RaceOp, number> = { mount: 0, unmount: 0, start: 0, stop: 0, 'device-loss': 0, 'socket-cut': 0 };
  const report = { sequences: 0, ops, rendersAfterUnmount: 0, notStoppedByUnmount: 0, statuses: {} as Record<string, number>, wentLive: 0, errors: [] as string[] };
  const onError = (message: string): void => void (report.errors.length < 20 && report.errors.push(message));

  function Captions({ lane, autoStart }: { lane: Lane; autoStart: boolean }): ReactElement {
    const c = useLiveCaptions({ ...pageOptions, autoStart });
    if (lane.store !== c.store) c.store.subscribe(() => void (c.store.getSnapshot().status === 'live' && live.add(c.store)));
    lane.store = c.store;
    lane.stores.add(c.store);
    if (!lane.mounted) report.rendersAfterUnmount++;
    return h('div', null, h('b', null, c.status), ...c.lines.map((l) => h('p', { key: l.id }, l.text)), h('i', null, c.partial));
  }

  const unmount = (lane: Lane): void => {
    lane.mounted = false;
    lane.root?.unmount();
    lane.root = undefined;
  };

  async function sequence(lane: Lane, next: () => number): Promise<void> {
    const container = document.createElement('div');
    document.body.append(container);
    const count = 2 + Math.floor(next() * (options.maxOps - 1));
    for (let i = 0; i < count; i++) {
      const roll = next();
      const op: RaceOp = i === 0 ? 'mount' : roll < 0.15 ? 'mount' : roll < 0.3 ? 'unmount' : roll < 0.55 ? 'start' : roll < 0.75 ? 'stop' : roll < 0.88 ? 'device-loss' : 'socket-cut';
      ops[op]++;
      if (op === 'mount' && !lane.mounted) {
        lane.mounted = true;
        lane.root = createRoot(container);
        const app = h(Captions, { lane, autoStart: next() < 0.5 });
        flushSync(() => lane.root!.render(next() < 0.5 ? h(StrictMode, null, app) : app));
      } else if (op === 'unmount' && lane.mounted) {
        unmount(lane);
      } else if (op === 'start' && lane.mounted) {
        void lane.store?.start().catch(() => undefined);
      } else if (op === 'stop' && lane.mounted) {
        void lane.store?.stop();
      } else if (op === 'device-loss') {
        // Any live microphone of the page: Chromium's fake device cannot be unplugged, so the loss is
        // its track stopped plus the `ended` the browser would fire.
        const live = (window as unknown as { gum: { streams: MediaStream[] } }).gum.streams.flatMap((s) => s.getAudioTracks()).filter((t) => t.readyState === 'live');
        const track = live[Math.floor(next() * live.length)];
        track?.stop();
        track?.dispatchEvent(new Event('ended'));
      } else if (op === 'socket-cut') {
        // Any open socket of the page, closed under its session (which did not ask for it).
        const open = sockets.filter((s) => s.readyState === NativeWebSocket.OPEN);
        open[Math.floor(next() * open.length)]?.close();
      }
      // Mostly a few ms (the races), sometimes long enough for a run to go live before what comes next.
      await sleep(next() < options.longGap ? 300 + Math.floor(next() * 500) : Math.floor(next() * options.maxGapMs));
    }
    if (lane.mounted) unmount(lane);
    container.remove();
    const stores = [...lane.stores];
    lane.stores.clear();
    lane.store = undefined;
    if (stores.length === 0) return;
    await sleep(50);
    // Every store of the sequence: a remount's earlier store was released by its own unmount.
    for (const store of stores) {
      const status = store.getSnapshot().status;
      if (!['idle', 'stopping', 'stopped', 'failed'].includes(status)) report.notStoppedByUnmount++;
    }
    // The unmounts already stopped them: this only waits for the same stops to end.
    await Promise.all(stores.map((store) => store.stop()));
    for (const store of stores) {
      const end = store.getSnapshot();
      const key = end.status === 'failed' ? `failed ${(end.error as { code?: string } | null)?.code ?? ''}: ${(end.error?.message ?? '').slice(0, 140)}` : end.status;
      report.statuses[key] = (report.statuses[key] ?? 0) + 1;
    }
  }

  window.addEventListener('error', (e) => onError(String(e.message)));
  window.addEventListener('unhandledrejection', (e) => onError(`unhandled: ${String((e.reason as { code?: string } | null)?.code ?? e.reason)}`));
  const consoleError = console.error.bind(console);
  console.error = (...args: unknown[]) => {
    onError(`console.error: ${args.map(String).join(' ').slice(0, 200)}`);
    consoleError(...args);
  };
  const live = new Set<LiveCaptions>();
  let issued = 0;
  await Promise.all(Array.from({ length: options.lanes }, async () => {
    const lane: Lane = { root: undefined, mounted: false, store: undefined, stores: new Set() };
    for (let n = issued++; n < options.sequences; n = issued++) {
      await sequence(lane, random(options.seed + n));
      report.sequences++;
    }
  }));
  report.wentLive = live.size;
  return report;
}

(window as unknown as { race: typeof race }).race = race;
