import type { SessionLine } from '@soundclone/core';

/**
 * The captions area: committed lines (entities marked) above the grey partial, one section per
 * session (earlier sessions stay, under their heading). Built with DOM nodes and textContent only,
 * never innerHTML, so recognised text can never inject markup.
 *
 * The area scrolls on its own: while the reader is at the bottom, each new line or partial keeps the
 * newest text in view; once they scroll up to read back, nothing moves under them until they return
 * to the bottom (or press "Newest").
 */
export class CaptionsView {
  readonly #scroller: HTMLElement;
  readonly #lines: HTMLElement;
  readonly #partial: HTMLElement;
  readonly #placeholder: HTMLElement;
  readonly #newest: HTMLButtonElement | null;
  readonly #byId = new Map<string, HTMLElement>();
  #section: HTMLElement | undefined;
  /** Whether the reader is following the newest line (at the bottom when they last scrolled). */
  #following = true;

  constructor(root: Document) {
    this.#scroller = root.getElementById('captions') as HTMLElement;
    this.#lines = root.getElementById('lines') as HTMLElement;
    this.#partial = root.getElementById('partial') as HTMLElement;
    this.#placeholder = root.getElementById('placeholder') as HTMLElement;
    this.#newest = root.getElementById('newest') as HTMLButtonElement | null;
    this.#scroller.addEventListener('scroll', () => {
      this.#following = this.#atBottom();
      if (this.#newest !== null) this.#newest.hidden = this.#following;
    }, { passive: true });
    this.#newest?.addEventListener('click', () => {
      this.#following = true;
      this.#newest!.hidden = true;
      this.#scrollToEnd();
    });
  }

  /** Starts a new session's section under a heading; what earlier sessions said stays above it. */
  beginSession(label: string): void {
    const section = document.createElement('section');
    section.className = 'session';
    const head = document.createElement('h2');
    head.className = 'session-head';
    head.textContent = label;
    section.append(head);
    this.#lines.append(section);
    this.#section = section;
    this.#byId.clear();
    this.#partial.textContent = '';
    this.#follow();
  }

  partial(text: string): void {
    this.#placeholder.hidden = true;
    this.#partial.textContent = text;
    this.#follow();
  }

  /** A committed line, or a supplement (entities) for one: rendered again in place. */
  line(line: SessionLine): void {
    this.#placeholder.hidden = true;
    let p = this.#byId.get(line.id);
    if (p === undefined) {
      p = document.createElement('p');
      p.className = 'line';
      p.dataset['id'] = line.id;
      this.#byId.set(line.id, p);
      (this.#section ?? this.#lines).append(p);
      this.#partial.textContent = ''; // the partial became this line
    }
    p.replaceChildren(...render(line));
    this.#follow();
  }

  /** After a change: keep the newest text in view, unless the reader scrolled up. */
  #follow(): void {
    if (this.#following) this.#scrollToEnd();
  }

  #scrollToEnd(): void {
    this.#scroller.scrollTop = this.#scroller.scrollHeight;
  }

  #atBottom(): boolean {
    const s = this.#scroller;
    // A few pixels of slack: zoom and fractional line heights leave the bottom a pixel off.
    return s.scrollHeight - s.scrollTop - s.clientHeight <= 8;
  }
}

/** The line's text with each entity's first occurrence (in order) wrapped in <mark class="entity">. */
function render(line: SessionLine): Node[] {
  const nodes: Node[] = [];
  if (line.startMs !== undefined) {
    const time = document.createElement('span');
    time.className = 'time';
    time.textContent = clock(line.startMs);
    nodes.push(time);
  }
  const text = line.revisedText ?? line.text;
  let at = 0;
  for (const raw of line.entities) {
    const entity = { text: String(raw['text'] ?? ''), category: String(raw['category'] ?? 'entity') };
    const found = entity.text === '' ? -1 : text.indexOf(entity.text, at);
    if (found < 0) continue;
    if (found > at) nodes.push(document.createTextNode(text.slice(at, found)));
    const mark = document.createElement('mark');
    mark.className = 'entity';
    mark.dataset['category'] = entity.category;
    mark.title = entity.category;
    mark.textContent = entity.text;
    nodes.push(mark);
    at = found + entity.text.length;
  }
  if (at < text.length) nodes.push(document.createTextNode(text.slice(at)));
  return nodes;
}

function clock(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
