// Real time even under a test's fake timers (util/real-timers.ts): sockets must not wait on a faked clock.
import { setImmediate } from '../util/real-timers.js';

/**
 * How much synchronous realtime work (frames fed to the recogniser, their acks; a taken-over open
 * segment replayed) the node does before it lets timers run. A recogniser that decodes on the event
 * loop (PocketSphinx) takes about a fifth of the audio's time; a client resending 10 s after a
 * reconnect, many sockets whose data arrived in the same poll phase, or a long open segment taken over
 * would otherwise hold the loop for seconds: heartbeats and acks of every other session wait, and with
 * the live state in Redis the node's lease renewals too, so the node would let its sessions go while
 * it is merely busy.
 *
 *   a socket's message --budget left--> processed now, its time charged
 *                      --budget spent--> queued in order, the socket paused, processed in a later turn
 *   a replayed piece   --budget left--> fed now; --budget spent--> fed in a later turn
 *
 * The budget is shared by every socket of the node and renews once per event-loop iteration (in the
 * check phase, before any queued work resumes), so the loop reaches its timers at least every few
 * budgets, however much audio is waiting.
 */
export const WORK_TURN_BUDGET_MS = 40;

let spentMs = 0;
let renewScheduled = false;

/** Whether socket work may run now (the budget of this loop iteration is not spent). */
export function workTurnOpen(): boolean {
  return spentMs < WORK_TURN_BUDGET_MS;
}

/** Counts `ms` of socket work done in this loop iteration. */
export function chargeWorkTurn(ms: number): void {
  spentMs += ms;
  if (!renewScheduled) {
    renewScheduled = true;
    setImmediate(renew);
  }
}

/**
 * Runs `work` once the budget renewed: in this iteration's check phase when queued from the poll phase
 * (after the renewal, which was queued first), in the next iteration (after its timers) when queued
 * from the check phase. So the loop runs its timers at least every two budgets.
 */
export function nextWorkTurn(work: () => void): NodeJS.Immediate {
  return setImmediate(work);
}

function renew(): void {
  renewScheduled = false;
  spentMs = 0;
}
