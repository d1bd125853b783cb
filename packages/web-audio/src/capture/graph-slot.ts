import type { CaptureDevice } from '@soundclone/core';
import type { CaptureGraphParts } from './capture-resources.js';
import type { FeedSink, FeedTotals } from './sample-feed.js';

/**
 * The graph a capture runs on now, and which one it is. Each graph has a generation, and its feed's
 * calls count only while that generation is the current one: a cut graph's late calls are dropped.
 * From a cut until the next graph is installed the slot still holds the cut graph, no longer live.
 */
export class GraphSlot {
  #graph: CaptureGraphParts;
  #generation = 0;
  #live = true;

  constructor(graph: CaptureGraphParts) {
    this.#graph = graph;
  }

  get graph(): CaptureGraphParts {
    return this.#graph;
  }

  /** The graph still holds its feed (false from a cut until the next graph is installed). */
  get live(): boolean {
    return this.#live;
  }

  /** The generation of the next graph (its sink is made before it is built). */
  get nextGeneration(): number {
    return this.#generation + 1;
  }

  /** The feed's sink for the graph of `generation`: its calls reach `target` only while that graph is current. */
  sinkFor(generation: number, target: FeedSink): FeedSink {
    return {
      block: (block) => generation === this.#generation && target.block(block),
      dropped: (from, frames) => generation === this.#generation && target.dropped(from, frames),
      skipped: (frames) => generation === this.#generation && target.skipped(frames),
      speech: (event, lag) => generation === this.#generation && target.speech(event, lag),
      failed: (error) => generation === this.#generation && target.failed(error),
    };
  }

  device(): CaptureDevice {
    const graph = this.#graph;
    return { id: graph.deviceId ?? '', label: graph.label ?? '', sampleRate: graph.context.sampleRate, channels: 1 };
  }

  /** The app's context for the next graph, while it is open; else the next graph makes its own. */
  appContext(): { context?: AudioContext } {
    const graph = this.#graph;
    return !graph.ownsContext && graph.context.state !== 'closed' ? { context: graph.context } : {};
  }

  /**
   * Cuts the graph: it no longer holds its feed, the feed stops (the frames it holds are handed on
   * first), and nothing more from it counts. Returns its worklet totals; the caller releases it.
   */
  async cut(stopTimeoutMs: number): Promise<FeedTotals> {
    const graph = this.#graph;
    this.#live = false;
    // A closed context runs no more worklet code: do not wait for an answer it cannot give.
    const totals = await graph.feed.stop(graph.context.state === 'closed' ? 0 : stopTimeoutMs);
    this.#generation++;
    return totals;
  }

  /** A new graph takes over, with the generation its sink was made for. */
  install(next: CaptureGraphParts, generation: number): void {
    this.#graph = next;
    this.#live = true;
    this.#generation = generation;
  }
}
