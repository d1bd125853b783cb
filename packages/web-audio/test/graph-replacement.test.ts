import { describe, expect, it } from 'vitest';
import type { FeedSink } from '../src/capture/sample-feed.ts';
import type { DeviceSearchResult, GraphBuilder } from '../src/capture/device-recovery.ts';
import type { CaptureGraph, GraphInput } from '../src/capture/graph.ts';
import { GraphSlot } from '../src/capture/graph-slot.ts';
import { afterSearch, findReplacement, planLoss, startSwitch, switchOverruled, type LossFacts, type ReplacePlan } from '../src/capture/graph-replacement.ts';
import { Suspension } from '../src/capture/suspension.ts';

/**
 * The decisions of a graph replacement, in Node: what a loss leads to for each kind of stream, what
 * a search's outcome becomes, when a setDevice() is refused or overruled, and what a context's state
 * change means. The graphs the builder makes here are plain objects: no browser is involved.
 */
const sink: FeedSink = { block: () => undefined, dropped: () => undefined, skipped: () => undefined, speech: () => undefined, failed: () => undefined };

/** A graph as far as the decisions look at it (and disposeGraph() can release it). */
function graph(id: string): CaptureGraph {
  const idle = { disconnect() {} };
  return {
    context: { sampleRate: 48_000, state: 'running', close: async () => undefined } as unknown as AudioContext,
    ownsContext: true,
    stream: { id, getAudioTracks: () => [], getTracks: () => [] } as unknown as MediaStream,
    releaseStream: true,
    track: { readyState: 'live' } as MediaStreamTrack,
    source: idle as unknown as MediaStreamAudioSourceNode,
    node: { ...idle, port: { close() {} } } as unknown as AudioWorkletNode,
    feed: { mode: 'transfer', dispose() {} } as unknown as CaptureGraph['feed'],
    deviceId: id,
    label: id,
    origin: 'microphone',
    audio: undefined,
  };
}

/** A builder whose rebuild answers from `answers` in turn (a graph, or a refusal) and records what it was asked. */
function builder(answers: Array<string | Error>, stopped = new AbortController().signal): GraphBuilder & { asked: GraphInput[] } {
  const asked: GraphInput[] = [];
  return {
    asked,
    rebuild: async (input) => {
      asked.push(input);
      const answer = answers.shift() ?? new Error('no device');
      if (answer instanceof Error) throw answer;
      return graph(answer);
    },
    slot: new GraphSlot(graph('first')),
    sink,
    devices: undefined,
    stopped,
  };
}

const facts = (over: Partial<LossFacts>): LossFacts => ({
  detail: 'track-ended', lost: { origin: 'microphone', track: undefined, stream: graph('lost').stream, releaseStream: true, audio: undefined },
  lostDeviceId: 'mic-1', builder: builder([]), recovery: {}, ...over,
});

/** Runs a search to its end: the reasons it gave, and what it returned. */
async function run(plan: ReplacePlan): Promise<{ reasons: string[]; found: DeviceSearchResult | undefined }> {
  const search = findReplacement(plan);
  const reasons: string[] = [];
  let step = await search.next();
  for (; step.done !== true; step = await search.next()) reasons.push(step.value);
  return { reasons, found: step.value };
}

describe('planLoss: what a lost graph leads to', () => {
  it('a microphone: the reason says it reconnects; replaced by a search for a microphone, nothing kept', () => {
    const plan = planLoss(facts({}));
    expect(plan).toMatchObject({ next: 'replace', reason: 'device lost (track-ended): reconnecting', keepStream: false, source: { kind: 'microphone', audio: undefined } });
  });

  it("the app's stream without reacquire: said so, and nothing may replace it", () => {
    const plan = planLoss(facts({ lost: { ...facts({}).lost, origin: 'app' } }));
    expect(plan).toMatchObject({ next: 'replace', reason: "stream lost (track-ended): the app's stream is not re-opened by the capture", keepStream: false, source: undefined });
  });

  it("the app's stream with reacquire: the app is asked, its streams released as the lost one's were", () => {
    const reacquire = async (): Promise<MediaStream | null> => null;
    const plan = planLoss(facts({ lost: { ...facts({}).lost, origin: 'app', releaseStream: false }, recovery: { reacquire } }));
    expect(plan).toMatchObject({ next: 'replace', reason: 'device lost (track-ended): reconnecting', source: { kind: 'app', reacquire, releaseStream: false } });
  });

  it("a closed context under the app's live track keeps the stream; an ended track does not", () => {
    const live = { ...facts({}).lost, origin: 'app' as const, track: { readyState: 'live' } as MediaStreamTrack };
    expect(planLoss(facts({ detail: 'context-closed', lost: live }))).toMatchObject({ next: 'replace', reason: 'device lost (context-closed): reconnecting', keepStream: true, source: undefined });
    const ended = { ...live, track: { readyState: 'ended' } as MediaStreamTrack };
    expect(planLoss(facts({ detail: 'context-closed', lost: ended }))).toMatchObject({ keepStream: false });
  });

  it('no recovery (recovery.enabled false, or no builder): the capture stops, with the same reason', () => {
    expect(planLoss(facts({ recovery: { enabled: false } }))).toEqual({ next: 'stop', reason: 'device lost (track-ended): reconnecting' });
    expect(planLoss(facts({ builder: undefined, detail: 'device-removed' }))).toEqual({ next: 'stop', reason: 'device lost (device-removed): reconnecting' });
  });
});

describe('findReplacement and afterSearch: the search a plan asks for, and what its outcome becomes', () => {
  it('a microphone: the lost device by id, then the default one; each try said before it is made', async () => {
    const b = builder([new Error('gone'), 'default-mic']);
    const plan = planLoss(facts({ builder: b })) as ReplacePlan;
    const { reasons, found } = await run(plan);
    expect(reasons).toEqual(['device lost (track-ended): reconnecting to it (attempt 1)', 'device lost (track-ended): reconnecting to the default device (attempt 1)']);
    expect(b.asked).toEqual([{ deviceId: 'mic-1' }, {}]);
    expect(found).toMatchObject({ outcome: 'found', generation: 1, graph: { deviceId: 'default-mic' } });
    expect(afterSearch(found, plan, false)).toMatchObject({ next: 'install', generation: 1, graph: { deviceId: 'default-mic' } });
    // stop() came after the search returned: the graph goes, unused.
    expect(afterSearch(found, plan, true)).toMatchObject({ next: 'dispose', graph: { deviceId: 'default-mic' } });
  });

  it("the app's live stream on a new context first; when that cannot be built and nothing else may replace it, WEB_AUDIO_DEVICE_LOST", async () => {
    const lost = { ...facts({}).lost, origin: 'app' as const, track: { readyState: 'live' } as MediaStreamTrack };
    const b = builder([new Error('no audio track')]);
    const plan = planLoss(facts({ detail: 'context-closed', lost, builder: b })) as ReplacePlan;
    const { reasons, found } = await run(plan);
    expect(reasons).toEqual(['AudioContext closed: the same stream on a new one']);
    expect(b.asked).toEqual([{ stream: lost.stream, releaseStream: true }]);
    expect(found).toBeUndefined();
    const decided = afterSearch(found, plan, false);
    expect(decided).toMatchObject({ next: 'fail', error: { name: 'WebAudioError', code: 'WEB_AUDIO_DEVICE_LOST' } });
    expect((decided as { error: Error }).error.message).toContain('does not re-open a stream it did not open');
  });

  it('no device within the attempts: WEB_AUDIO_DEVICE_LOST with their number; stop() during the search: nothing to do', async () => {
    const plan = planLoss(facts({ builder: builder([]), recovery: { attempts: 2, nextDelayMs: () => 0 } })) as ReplacePlan;
    const { reasons, found } = await run(plan);
    expect(reasons).toHaveLength(4);
    expect(found).toEqual({ outcome: 'gave-up', attempts: 2 });
    const decided = afterSearch(found, plan, false);
    expect(decided).toMatchObject({ next: 'fail', error: { code: 'WEB_AUDIO_DEVICE_LOST' } });
    expect((decided as { error: Error }).error.message).toContain('after 2 attempts');
    expect(afterSearch({ outcome: 'stopped' }, plan, true)).toEqual({ next: 'none' });
  });

  it('a graph built after stop() began is disposed by the search, which says it stopped', async () => {
    const stop = new AbortController();
    const b = builder(['mic-1'], stop.signal);
    const plan = planLoss(facts({ builder: b })) as ReplacePlan;
    const search = findReplacement(plan);
    expect((await search.next()).value).toBe('device lost (track-ended): reconnecting to it (attempt 1)');
    stop.abort(); // stop() as the try begins: its getUserMedia cannot be called back
    expect(await search.next()).toEqual({ done: true, value: { outcome: 'stopped' } });
  });
});

describe('startSwitch and switchOverruled: setDevice()', () => {
  it('refuses a missing id, a capture that builds no graph, and one already replacing its graph, in that order', () => {
    const b = builder([]);
    expect(startSwitch('', undefined, true, {})).toMatchObject({ next: 'refuse', error: { code: 'WEB_AUDIO_INVALID_OPTION', message: 'setDevice() needs a device id (from enumerateDevices())' } });
    expect(startSwitch('mic-2', undefined, true, {})).toMatchObject({ next: 'refuse', error: { message: expect.stringContaining('may open microphones') } });
    expect(startSwitch('mic-2', b, true, {})).toMatchObject({ next: 'refuse', error: { message: expect.stringContaining('while recovering') } });
  });

  it("opens the device with the current graph's constraints", () => {
    const b = builder([]);
    expect(startSwitch('mic-2', b, false, { audio: { echoCancellation: true } })).toEqual({ next: 'open', builder: b, input: { deviceId: 'mic-2', audio: { echoCancellation: true } } });
    expect(startSwitch('mic-2', b, false, {})).toEqual({ next: 'open', builder: b, input: { deviceId: 'mic-2' } });
  });

  it("goes on unless the caller aborted (its reason) or stop() came (WEB_AUDIO_STOPPED); the caller's abort wins", () => {
    expect(switchOverruled(false)).toBeUndefined();
    expect(switchOverruled(false, new AbortController().signal)).toBeUndefined();
    expect(switchOverruled(true)).toMatchObject({ reject: { code: 'WEB_AUDIO_STOPPED' } });
    const aborted = new AbortController();
    aborted.abort(new Error('the app changed its mind'));
    expect(switchOverruled(true, aborted.signal)).toEqual({ reject: new Error('the app changed its mind') });
  });
});

describe('Suspension.contextChanged: a context that stops running and runs again', () => {
  it('closed is a loss; suspended once (then nothing until it runs); running again cuts at the last frame before', () => {
    const s = new Suspension();
    expect(s.contextChanged('running', 10)).toEqual({ next: 'none' });
    expect(s.contextChanged('suspended', 120)).toEqual({ next: 'suspended', reason: 'suspended: the AudioContext is suspended' });
    expect(s.active).toBe(true);
    expect(s.contextChanged('interrupted', 130)).toEqual({ next: 'none' });
    const resumed = s.contextChanged('running', 500);
    expect(resumed).toMatchObject({ next: 'resumed', lastFrameMs: 120 });
    expect((resumed as { sinceMs: number }).sinceMs).toBeGreaterThanOrEqual(0);
    expect(s.active).toBe(false);
    expect(s.contextChanged('closed', 600)).toEqual({ next: 'lose' });
  });
});
