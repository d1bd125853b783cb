import type { Cue, CueChange } from '@soundclone/core';

/**
 * The live caption cues where a player shows them: a real TextTrack of VTTCues on the page's media
 * element (one track per session, since each session's clock starts at 0), and the newest cue in the
 * caption box under the captions panel, the way a player draws it (its lines, grey while live).
 *
 * Every change is applied by cue id: a live cue is updated in place as its words turn stable, the
 * final cue that commits it keeps its VTTCue (same id), a revision rewrites the cue with that id
 * (alignment moves its times), a removed live cue leaves the track. A cue a revision emptied leaves
 * the track too: there is nothing left to show. Earlier sessions' tracks stay on the element, hidden.
 */
export class CueTrack {
  readonly #media: HTMLMediaElement;
  readonly #box: HTMLElement;
  readonly #byId = new Map<string, { cue: Cue; vtt: VTTCue }>();
  #track: TextTrack | undefined;
  #label = '';

  constructor(root: Document) {
    this.#media = root.getElementById('captions-media') as HTMLMediaElement;
    this.#box = root.getElementById('cue') as HTMLElement;
  }

  /**
   * The next cues are a new session's: they go on a new track, added with the first of them (a Start
   * that fails adds none). The caption box starts empty.
   */
  beginSession(label: string): void {
    this.#label = label;
    this.#track = undefined;
    this.#byId.clear();
    this.#draw();
  }

  apply(change: CueChange): void {
    const { cue } = change;
    if (this.#track === undefined && (change.kind === 'removed' || cue.text === '')) return;
    const track = (this.#track ??= this.#addTrack());
    const held = this.#byId.get(cue.id);
    if (change.kind === 'removed' || cue.text === '') {
      if (held !== undefined) track.removeCue(held.vtt);
      this.#byId.delete(cue.id);
    } else if (held !== undefined) {
      // In place: the same VTTCue object, so a player showing it redraws without a flash.
      held.vtt.startTime = cue.startMs / 1000;
      held.vtt.endTime = cue.endMs / 1000;
      held.vtt.text = cueText(cue);
      this.#byId.set(cue.id, { cue, vtt: held.vtt });
    } else {
      const vtt = new VTTCue(cue.startMs / 1000, cue.endMs / 1000, cueText(cue));
      vtt.id = cue.id;
      track.addCue(vtt);
      this.#byId.set(cue.id, { cue, vtt });
    }
    this.#draw();
  }

  #addTrack(): TextTrack {
    const track = this.#media.addTextTrack('captions', this.#label, 'en');
    // 'hidden', not 'disabled': a disabled track's `cues` is null. An <audio> element draws no cues
    // itself; the caption box does.
    track.mode = 'hidden';
    return track;
  }

  /** The newest cue (highest index) still on the track, line by line; a live cue's unstable tail apart. */
  #draw(): void {
    let newest: Cue | undefined;
    for (const { cue } of this.#byId.values()) if (newest === undefined || cue.index > newest.index) newest = cue;
    this.#box.dataset['id'] = newest?.id ?? '';
    this.#box.classList.toggle('live', newest !== undefined && !newest.final);
    this.#box.replaceChildren(...(newest === undefined ? [] : lines(newest)));
  }
}

/** A VTTCue's text is cue-text markup: `&`, `<`, `>` escaped, the speaker as a voice span (as in the WebVTT files). */
function cueText(cue: Cue): string {
  const text = cue.lines.map(escape).join('\n');
  return cue.speaker === null ? text : `<v ${escape(cue.speaker)}>${text}`;
}

function escape(text: string): string {
  return text.replace(/&/gu, '&amp;').replace(/</gu, '&lt;').replace(/>/gu, '&gt;');
}

/** DOM nodes, textContent only: recognised text never becomes markup on the page. */
function lines(cue: Cue): HTMLElement[] {
  const out = cue.lines.map((text) => {
    const line = document.createElement('span');
    line.className = 'cue-line';
    line.textContent = text;
    return line;
  });
  if (cue.tail !== '') {
    const tail = document.createElement('span');
    tail.className = 'cue-tail';
    tail.textContent = cue.tail;
    const last = out.at(-1);
    if (last === undefined) out.push(tail);
    else last.append(' ', tail);
  }
  return out;
}
