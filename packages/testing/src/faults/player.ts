import type { ChaosProxy, Faults, SocketFaultHandle } from '@soundclone/server';
import { placeSteps, type FaultStep, type PlacedStep } from './steps.js';

/** One step that acted: which, on which session, at what received position. */
export interface FiredStep {
  readonly index: number;
  readonly do: FaultStep['do'];
  readonly sessionId: string;
  readonly receivedSamples: string;
}

/** A fault script playing against one session. */
export interface FaultRun {
  /** The session it is bound to (undefined until a session's audio arrives, when none was named). */
  readonly sessionId: string | undefined;
  /** Steps that acted, in order. */
  readonly fired: readonly FiredStep[];
  /** Steps still waiting for their trigger. */
  readonly pending: number;
  /** Stops: no step acts any more, rules it added go, its timers are cleared. Idempotent. */
  stop(): void;
}

interface PlayerDeps {
  readonly faults: Faults;
  readonly proxy: ChaosProxy;
  /** Subscribes to accepted audio; returns the unsubscribe. */
  readonly onAudio: (listener: (sessionId: string, receivedSamples: bigint) => void) => () => void;
}

/**
 * Plays fault steps against a session: position triggers act right after the frame that reached them
 * is accepted (before the service handles anything else), so a step keyed to sample N acts at the same
 * point of the stream run after run. Without `sessionId`, the run binds to the first session whose
 * audio arrives after it starts.
 */
export class FaultPlayer implements FaultRun {
  readonly fired: FiredStep[] = [];
  private readonly waiting: PlacedStep[];
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly handles = new Set<SocketFaultHandle>();
  private readonly unsubscribe: () => void;
  private bound: string | undefined;
  private stopped = false;
  private received = 0n;

  constructor(steps: readonly FaultStep[], private readonly deps: PlayerDeps, sessionId?: string) {
    this.waiting = placeSteps(steps);
    this.bound = sessionId;
    this.unsubscribe = deps.onAudio((id, received) => this.heard(id, received));
  }

  get sessionId(): string | undefined {
    return this.bound;
  }

  get pending(): number {
    return this.waiting.length;
  }

  private heard(sessionId: string, received: bigint): void {
    if (this.stopped) return;
    if (this.bound === undefined) this.bound = sessionId;
    if (sessionId !== this.bound) return;
    if (this.received === 0n) this.armTimed();
    this.received = received;
    const due = this.waiting.filter((s) => s.atSample !== undefined && s.atSample <= received);
    if (due.length === 0) return;
    for (const step of due) this.waiting.splice(this.waiting.indexOf(step), 1);
    // After the frame's own handling (its ack, its lines) and before the next message is read.
    queueMicrotask(() => {
      for (const step of due) this.act(step);
    });
  }

  private armTimed(): void {
    for (const step of this.waiting.filter((s) => s.afterMs !== undefined)) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.waiting.splice(this.waiting.indexOf(step), 1);
        this.act(step);
      }, step.afterMs);
      this.timers.add(timer);
    }
  }

  private act(placed: PlacedStep): void {
    const sessionId = this.bound;
    if (this.stopped || sessionId === undefined) return;
    const step = placed.step;
    const socket = this.deps.faults.socket;
    this.fired.push({ index: placed.index, do: step.do, sessionId, receivedSamples: this.received.toString() });
    switch (step.do) {
      case 'cut':
        this.deps.proxy.cut();
        return;
      case 'stall':
        this.deps.proxy.stall(step.ms);
        return;
      case 'halfOpen':
        this.deps.proxy.halfOpen();
        return;
      case 'close':
        socket.closeSocket(sessionId, step.code ?? 4000, 'scripted close');
        return;
      case 'rotate':
        socket.rotateNow(sessionId);
        return;
      case 'expireToken':
        socket.expireTokens(sessionId);
        return;
      case 'withholdAcks':
        this.hold(socket.inject({ kind: 'withholdAcks', sessionId }), step.forMs);
        return;
      case 'delayAcks':
        this.hold(socket.inject({ kind: 'delayAcks', ms: step.ms, sessionId }), step.forMs);
        return;
      case 'withholdSupplements':
        this.hold(socket.inject({ kind: 'withholdSupplements', sessionId, ...(step.kinds !== undefined ? { kinds: step.kinds } : {}) }), step.forMs);
        return;
      case 'delaySupplements':
        this.hold(socket.inject({ kind: 'delaySupplements', ms: step.ms, sessionId, ...(step.kinds !== undefined ? { kinds: step.kinds } : {}) }), step.forMs);
        return;
    }
  }

  /** Keeps a rule for `forMs`, or until the run stops. */
  private hold(handle: SocketFaultHandle, forMs: number | undefined): void {
    this.handles.add(handle);
    if (forMs === undefined) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.handles.delete(handle);
      handle.remove();
    }, forMs);
    this.timers.add(timer);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const handle of this.handles) handle.remove();
    this.handles.clear();
  }
}
