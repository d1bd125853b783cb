import type { SessionLine } from '@soundclone/core';

/**
 * The captions area: committed lines (entities marked) above the grey partial. Built with DOM nodes
 * and textContent only, never innerHTML, so recognised text can never inject markup.
 */
export class CaptionsView {
  readonly #lines: HTMLElement;
  readonly #partial: HTMLElement;
  readonly #placeholder: HTMLElement;
  readonly #byId = new Map<string, HTMLElement>();

  constructor(root: Document) {
    this.#lines = root.getElementById('lines') as HTMLElement;
    this.#partial = root.getElementById('partial') as HTMLElement;
    this.#placeholder = root.getElementById('placeholder') as HTMLElement;
  }

  partial(text: string): void {
    this.#placeholder.hidden = true;
    this.#partial.textContent = text;
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
      this.#lines.append(p);
      this.#partial.textContent = ''; // the partial became this line
    }
    p.replaceChildren(...render(line));
  }

  clear(): void {
    this.#lines.replaceChildren();
    this.#byId.clear();
    this.#partial.textContent = '';
    this.#placeholder.hidden = false;
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
