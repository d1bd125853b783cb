import assert from 'node:assert/strict';
import { scenario, scriptAudio } from '@soundclone/testing';
import { captionAudio } from '../src/worker.js';

/**
 * The worker's tests, written once with `node:assert` and run by each runner's file (test/node,
 * test/vitest, test/jest): every case takes the test server its runner started with `script`.
 */
export const script = [
  { at: '0.5s', say: 'welcome to the show' },
  { at: '2.5s', say: 'tonight we talk about testing' },
  { at: '5s', say: 'thanks for listening' },
];
const audio = scriptAudio(script);

/**
 * The audio in 20 ms chunks, yielding now and then as a capture does.
 * @param {Int16Array} pcm
 */
async function* chunks(pcm) {
  for (let at = 0, n = 0; at < pcm.length; at += 320, n++) {
    yield pcm.subarray(at, at + 320);
    if (n % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** @type {ReadonlyArray<{ name: string, run: (server: import('@soundclone/testing').TestServer) => Promise<void> }>} */
export const cases = [
  {
    name: 'captions every line once, at the scripted times',
    async run(server) {
      const { cues } = await captionAudio(server.client(), chunks(audio));
      assert.deepEqual(cues.map((c) => [c.text, c.startMs]), [
        ['welcome to the show', 500],
        ['tonight we talk about testing', 2500],
        ['thanks for listening', 5000],
      ]);
    },
  },
  {
    name: 'gives the same captions on flaky wifi, and every sample reaches the service once',
    async run(server) {
      const faults = server.playFaults(scenario('flaky-wifi', { audio: audio.length, seed: 42 }));
      const { sessionId, cues } = await captionAudio(server.client(), chunks(audio));
      assert.deepEqual(cues.map((c) => c.text), script.map((l) => l.say));
      assert.deepEqual(await server.storedAudio(sessionId), audio);
      assert.equal(faults.fired.length, 3);
    },
  },
  {
    name: 'is charged for the audio it sent, no more',
    async run(server) {
      const { sessionId } = await captionAudio(server.client(), chunks(audio));
      const charges = await server.charges(sessionId);
      assert.equal(charges.state, 'SETTLED');
      assert.equal(charges.billableDurationMs, BigInt(Math.round(audio.length / 16)));
    },
  },
];
