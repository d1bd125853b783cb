import type { Line, RestoredAudio, SessionAudio } from '../realtime/session/audio.js';
import type { RealtimeCreateRequest } from '../realtime/session/options.js';
import { LIVE_STATE } from '../protocol.js';
import type { HeldLease, LiveRecord, LiveStore, LostReason } from './live-store.js';

/**
 * One session's durable side while this node owns it: every change of its audio state goes to Redis
 * as one fenced write (live-store.ts, scripts.ts WRITE), in order, on the node's one connection:
 *
 *   feed accepted n samples --sync(audio, samples)--> append n samples, new lines, meta (cursors, epoch,
 *                                                     state, anchor; the open segment trimmed to it)
 *   pause, resume, rotation, captured, finish --sync(audio)--> new lines, meta
 *   answer 1 --> `durable` = the received cursor that write carried; listeners told (the socket acks it)
 *   answer 0 (another node took the session) or an error --> lost once: the owner lets the session go
 *
 * `durable` is what an audio.ack may say (docs/protocol.md "Several nodes"): audio no single node's
 * loss can lose any more.
 */
export interface LiveIdentity {
  readonly sessionId: string;
  readonly taskId: string;
  readonly ownerId: string;
  readonly createdAt: number;
  readonly request: RealtimeCreateRequest;
}

/** meta, as kept (scripts.ts); bigint cursors as decimal strings. */
interface LiveMeta extends LiveIdentity {
  readonly v: 1;
  readonly epoch: number;
  readonly epochStart: string;
  readonly received: string;
  readonly sent: string;
  readonly captured: string;
  /** Samples of captured time declared skipped (absent: none; written before skip frames existed). */
  readonly skipped?: string;
  readonly state: 'ACTIVE' | 'PAUSED' | 'FINISHING';
  readonly accepting: boolean;
  readonly exhausted: boolean;
  readonly anchor: string;
  readonly anchorState: unknown;
}

type LineRecord = Pick<Line, 'id' | 'epoch' | 'text' | 'startMs' | 'endMs' | 'source'>;

export class LiveSession implements HeldLease {
  /** The received cursor Redis holds: what may be acknowledged. */
  durable: bigint;
  private appended: bigint;
  private writtenLines: number;
  private writtenAnchor: bigint;
  private lostFlag = false;
  private closing = false;
  private pending = new Set<Promise<unknown>>();
  /** Audio taken and not yet written (the next write carries it), and the state that write describes. */
  private unwritten: Buffer[] = [];
  private latest: SessionAudio | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastWriteAt = -Infinity;
  private writtenState: WrittenState | undefined;
  /** `{"v":1,...identity` without its closing brace: the meta's part that never changes. */
  private readonly identityJson: string;
  private readonly durableListeners = new Set<() => void>();

  constructor(
    private readonly store: LiveStore,
    readonly identity: LiveIdentity,
    readonly token: string,
    start: { readonly received: bigint; readonly lines: number; readonly anchor: bigint; readonly takenAt: number },
    private readonly retain: boolean,
    private readonly onLost: (reason: LostReason) => void,
    private readonly writeEveryMs: number = LIVE_STATE.writeEveryMs,
  ) {
    this.identityJson = JSON.stringify({ v: 1, ...identity }).slice(0, -1);
    this.durable = start.received;
    this.appended = start.received;
    this.writtenLines = start.lines;
    this.writtenAnchor = start.anchor;
    store.hold(identity.sessionId, this, start.takenAt);
  }

  get lost(): boolean {
    return this.lostFlag;
  }

  /** Hears each advance of `durable`. */
  onDurable(listener: () => void): () => void {
    this.durableListeners.add(listener);
    return () => this.durableListeners.delete(listener);
  }

  /**
   * Takes what changed since the last write: `samples` (just accepted, contiguous with what was
   * appended so far) or `skipped` time, the lines committed since, the meta. Audio is written at most
   * every `writeEveryMs` (a write carries every frame taken since the last one: one Redis call, not one
   * per frame); any other change (pause, resume, rotation, lines, captured) is written at once with
   * what is pending. Never throws; a failure loses the session.
   */
  sync(audio: SessionAudio, samples?: Int16Array, skipped = 0): void {
    if (this.lostFlag || this.closing) return;
    // A view, not a copy: the frame's samples are never written to after they were accepted, and the
    // next write copies every view it carries once (Buffer.concat).
    let bytes = samples === undefined || samples.length === 0 ? EMPTY : Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
    this.appended += BigInt(bytes.length / 2 + skipped);
    // Skipped time (skip frames) is zeros in the open segment and the retained audio, as it reads on the
    // node; when the open segment starts after the skip (the usual case) nothing needs writing for it.
    if (skipped > 0 && (this.retain || audio.anchor < this.appended)) bytes = Buffer.alloc(skipped * 2);
    if (bytes.length > 0) this.unwritten.push(bytes);
    this.latest = audio;
    const onlyAudio = (samples !== undefined || skipped > 0) && audio.lines.length === this.writtenLines && sameState(audio, this.writtenState);
    const wait = onlyAudio ? this.lastWriteAt + this.writeEveryMs - performance.now() : 0;
    if (wait <= 0) {
      this.write();
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.write(), wait);
    }
  }

  /** One fenced write of everything taken since the last one. */
  private write(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const audio = this.latest;
    if (audio === undefined || this.lostFlag) return;
    this.latest = undefined;
    this.lastWriteAt = performance.now();
    this.writtenState = stateOf(audio);
    const bytes = this.unwritten.length === 1 ? (this.unwritten[0] as Buffer) : Buffer.concat(this.unwritten);
    this.unwritten = [];
    const lines = audio.lines.slice(this.writtenLines).map((line) => JSON.stringify(lineRecord(line)));
    this.writtenLines = audio.lines.length;
    // The anchor never passes what was appended (the open segment is trimmed to it in the same write).
    const anchor = audio.anchor > this.appended ? this.appended : audio.anchor;
    const cut = anchor > this.writtenAnchor ? Number(anchor - this.writtenAnchor) * 2 : 0;
    if (anchor > this.writtenAnchor) this.writtenAnchor = anchor;
    // The identity (with the create request) never changes: it is serialised once (`identityJson`).
    const changing: Omit<LiveMeta, 'v' | keyof LiveIdentity> = {
      epoch: audio.epoch,
      epochStart: audio.epochStart.toString(),
      received: this.appended.toString(),
      sent: audio.sent.toString(),
      captured: audio.captured.toString(),
      skipped: audio.skippedSamples.toString(),
      state: audio.state === 'CLOSED' ? 'FINISHING' : audio.state,
      accepting: audio.accepting,
      exhausted: audio.exhausted,
      anchor: this.writtenAnchor.toString(),
      anchorState: this.writtenAnchor === audio.anchor ? audio.anchorState ?? null : null,
    };
    const meta = `${this.identityJson},${JSON.stringify(changing).slice(1)}`;
    const carried = this.appended;
    const write = this.store.write(this.identity.sessionId, this.token, meta, bytes, cut, this.retain, lines).then(
      (ok) => {
        if (!ok) return this.lose('fenced');
        if (carried > this.durable && !this.lostFlag) {
          this.durable = carried;
          for (const listener of [...this.durableListeners]) listener();
        }
      },
      () => this.lose('unavailable'),
    );
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
  }

  /** Resolves once every write issued so far has been answered. */
  async settled(): Promise<void> {
    if (this.latest !== undefined) this.write();
    await Promise.all([...this.pending]);
  }

  /** The session ended in the database: its live state goes, and this node stops renewing it. */
  async end(): Promise<void> {
    this.store.forget(this.identity.sessionId, this);
    if (this.lostFlag) return;
    await this.settled();
    await this.store.end(this.identity.sessionId, this.token).catch(() => undefined);
  }

  /**
   * This node lets the session go on purpose (it closes): every write answered, no more taken, and the
   * lease released so another node takes the session over at once. Never rejects.
   */
  async handOver(): Promise<void> {
    if (this.lostFlag) return;
    // Nothing more is written (so nothing more acknowledged) from here on.
    this.closing = true;
    await this.settled();
    if (this.lostFlag) return;
    this.lostFlag = true;
    this.store.forget(this.identity.sessionId, this);
    await this.store.release(this.identity.sessionId, this.token).catch(() => undefined);
  }

  /** Lost (fenced out, or Redis unreachable): once; the owner lets the session go. */
  lose(reason: LostReason): void {
    if (this.lostFlag) return;
    this.lostFlag = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.unwritten = [];
    this.latest = undefined;
    this.store.forget(this.identity.sessionId, this);
    this.onLost(reason);
  }
}

/** What besides audio and lines a write must not wait for: a new epoch, a pause, a rotation's refusal. */
type WrittenState = Pick<SessionAudio, 'epoch' | 'state' | 'accepting' | 'exhausted'>;

function stateOf(audio: SessionAudio): WrittenState {
  return { epoch: audio.epoch, state: audio.state, accepting: audio.accepting, exhausted: audio.exhausted };
}

function sameState(audio: SessionAudio, written: WrittenState | undefined): boolean {
  return written !== undefined && audio.epoch === written.epoch && audio.state === written.state && audio.accepting === written.accepting && audio.exhausted === written.exhausted;
}

const EMPTY = Buffer.alloc(0);

function lineRecord(line: Line): LineRecord {
  return { id: line.id, epoch: line.epoch, text: line.text, startMs: line.startMs, endMs: line.endMs, source: line.source };
}

/** A session read back for a takeover: who it is, and its audio state for SessionAudio.restore. */
export interface LiveSnapshot {
  readonly identity: LiveIdentity;
  readonly audio: RestoredAudio;
  readonly received: bigint;
}

/** Decodes a LiveRecord (what live-session wrote); throws on a record this version did not write. */
export function snapshotOf(record: LiveRecord): LiveSnapshot {
  const meta = JSON.parse(record.meta) as LiveMeta;
  if (meta.v !== 1) throw new Error(`live state of session ${meta.sessionId} has version ${String(meta.v)}`);
  const open = pcm16(record.open);
  const anchor = BigInt(meta.anchor);
  const received = BigInt(meta.received);
  if (anchor + BigInt(open.length) !== received) throw new Error(`live state of session ${meta.sessionId} is inconsistent: anchor ${anchor} + ${open.length} open samples != received ${received}`);
  return {
    identity: { sessionId: meta.sessionId, taskId: meta.taskId, ownerId: meta.ownerId, createdAt: meta.createdAt, request: meta.request },
    received,
    audio: {
      epoch: meta.epoch,
      epochStart: BigInt(meta.epochStart),
      sent: BigInt(meta.sent),
      captured: BigInt(meta.captured),
      skipped: BigInt(meta.skipped ?? '0'),
      state: meta.state,
      accepting: meta.accepting,
      exhausted: meta.exhausted,
      anchor,
      anchorState: meta.anchorState ?? undefined,
      lines: record.lines.map((l) => JSON.parse(l) as LineRecord),
      open,
      ...(record.all !== undefined ? { retained: pcm16(record.all) } : {}),
    },
  };
}

/** The meta a new session starts with (nothing received yet). */
export function initialMeta(identity: LiveIdentity, epoch: number): string {
  const zero = '0';
  const meta: LiveMeta = { v: 1, ...identity, epoch, epochStart: zero, received: zero, sent: zero, captured: zero, state: 'ACTIVE', accepting: true, exhausted: false, anchor: zero, anchorState: null };
  return JSON.stringify(meta);
}

function pcm16(buffer: Buffer): Int16Array {
  const copy = new Int16Array(buffer.length >> 1);
  for (let i = 0; i < copy.length; i++) copy[i] = buffer.readInt16LE(i * 2);
  return copy;
}
