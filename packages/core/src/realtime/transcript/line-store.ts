import type { RealtimeLine } from '../../types/realtime.js';
import type { AlignmentMessage, EntitiesMessage, LanguageMessage, RevisionMessage, WireLine } from '../messages/server-messages.js';

export type SupplementKind = 'alignment' | 'entities' | 'revision' | 'language';

/** A committed line with the supplements that arrived so far. */
export interface SessionLine extends RealtimeLine {
  readonly epoch?: number;
  readonly startMs?: number;
  readonly endMs?: number;
  /** Supplements still expected (as the server announced them with the line). */
  readonly pendingSupplements: readonly string[];
}

/** A server message that adds to a committed line after it was sent (alignment, entities, revision, language). */
export type SupplementMessage = AlignmentMessage | EntitiesMessage | RevisionMessage | LanguageMessage;

/**
 * Line ids whose supplements may wait for their line. The server sends a line before its supplements,
 * so this only absorbs reordering; a buggy or hostile peer naming ids that never come cannot grow it
 * past this (the oldest waiting id is dropped first). Per id, one supplement per kind is kept.
 */
export const MAX_EARLY_LINES = 64;

export interface LineUpdate {
  readonly line: SessionLine;
  /** Which supplement changed the line; `resync` when a reconnect's session view brought new fields. */
  readonly supplement: SupplementKind | 'resync';
}

/**
 * Lines by id (a line is emitted once, then updated, never duplicated). A line seen again,
 * after a reconnect's session view or a repeated message, becomes an update, never a second line.
 * Supplements that arrive before their line (not expected, but cheap to tolerate) wait for it, for at
 * most MAX_EARLY_LINES line ids.
 */
export class LineStore {
  readonly #lines = new Map<string, SessionLine>();
  readonly #early = new Map<string, Map<SupplementKind, SupplementMessage>>();

  get size(): number {
    return this.#lines.size;
  }

  /** Lines in arrival order. */
  all(): SessionLine[] {
    return [...this.#lines.values()];
  }

  get(id: string): SessionLine | undefined {
    return this.#lines.get(id);
  }

  /** A committed line: `{ line }` when new (emit it), `{ update }` when already known, nothing when unchanged. */
  add(wire: WireLine | RealtimeLine): { line?: SessionLine; update?: LineUpdate } {
    const known = this.#lines.get(wire.id);
    if (known !== undefined) {
      const merged = merge(known, wire);
      if (merged === known) return {};
      this.#lines.set(wire.id, merged);
      return { update: { line: merged, supplement: 'resync' } };
    }
    let line: SessionLine = { ...wire, pendingSupplements: 'pendingSupplements' in wire && wire.pendingSupplements !== undefined ? [...wire.pendingSupplements] : [] };
    for (const early of this.#early.get(wire.id)?.values() ?? []) line = applySupplement(line, early);
    this.#early.delete(wire.id);
    this.#lines.set(wire.id, line);
    return { line };
  }

  /** A supplement for a line: the updated line, or undefined when its line has not arrived yet. */
  supplement(message: SupplementMessage): LineUpdate | undefined {
    const known = this.#lines.get(message.lineId);
    if (known === undefined) {
      this.#keepEarly(message);
      return undefined;
    }
    const line = applySupplement(known, message);
    this.#lines.set(line.id, line);
    return { line, supplement: kindOf(message) };
  }

  /** Line ids with supplements waiting for their line (bounded by MAX_EARLY_LINES). */
  get earlyLines(): number {
    return this.#early.size;
  }

  #keepEarly(message: SupplementMessage): void {
    let waiting = this.#early.get(message.lineId);
    if (waiting === undefined) {
      if (this.#early.size >= MAX_EARLY_LINES) {
        const oldest = this.#early.keys().next();
        if (oldest.done !== true) this.#early.delete(oldest.value);
      }
      waiting = new Map();
      this.#early.set(message.lineId, waiting);
    }
    waiting.set(kindOf(message), message); // a repeat of a kind replaces the earlier one, as it would on the line
  }
}

function kindOf(message: SupplementMessage): SupplementKind {
  switch (message.type) {
    case 'transcript.alignment':
      return 'alignment';
    case 'transcript.entities':
      return 'entities';
    case 'transcript.revision':
      return 'revision';
    case 'transcript.language':
      return 'language';
  }
}

function applySupplement(line: SessionLine, m: SupplementMessage): SessionLine {
  const kind = kindOf(m);
  const pendingSupplements = line.pendingSupplements.filter((k) => k !== kind);
  switch (m.type) {
    case 'transcript.alignment':
      return { ...line, words: m.words, characterAlignments: m.characterAlignments, pendingSupplements };
    case 'transcript.entities':
      return { ...line, entities: m.entities, pendingSupplements };
    case 'transcript.revision':
      return { ...line, revisedText: m.revisedText, pendingSupplements };
    case 'transcript.language':
      return { ...line, languageCode: m.languageCode, languageProbability: m.languageProbability, pendingSupplements };
  }
}

/** Fields a later view of the same line may have filled in (supplements that arrived while offline). */
function merge(known: SessionLine, view: WireLine | RealtimeLine): SessionLine {
  const changed =
    (view.revisedText ?? null) !== known.revisedText ||
    (view.languageCode ?? null) !== known.languageCode ||
    view.words.length !== known.words.length ||
    view.entities.length !== known.entities.length ||
    view.characterAlignments.length !== known.characterAlignments.length;
  if (!changed) return known;
  return {
    ...known,
    revisedText: view.revisedText ?? known.revisedText,
    languageCode: view.languageCode ?? known.languageCode,
    languageProbability: view.languageProbability ?? known.languageProbability,
    words: view.words.length > 0 ? view.words : known.words,
    characterAlignments: view.characterAlignments.length > 0 ? view.characterAlignments : known.characterAlignments,
    entities: view.entities.length > 0 ? view.entities : known.entities,
    pendingSupplements: 'pendingSupplements' in view && view.pendingSupplements !== undefined ? [...view.pendingSupplements] : known.pendingSupplements,
  };
}
