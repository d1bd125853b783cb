import type { Output } from './output.js';

const CLEAR_LINE = '\r\x1b[2K';

/**
 * The captions display. On a terminal the partial line is rewritten in place (carriage return and
 * erase-line) and each committed line is printed for good; status lines (connection state,
 * reconnects, rotations) are slipped in above the partial, which is then redrawn. Not on a
 * terminal: committed lines and status only, one per line, nothing rewritten.
 */
export class CaptionScreen {
  #partial = '';

  constructor(private readonly out: Output) {}

  partial(text: string): void {
    this.#partial = text;
    if (this.out.tty && !this.out.json) this.#drawPartial();
  }

  line(text: string, label = ''): void {
    this.#partial = '';
    if (this.out.tty) this.out.stdout.write(CLEAR_LINE);
    this.out.stdout.write(`${label}${text}\n`);
  }

  status(text: string): void {
    if (this.out.tty && this.#partial !== '') this.out.stdout.write(CLEAR_LINE);
    this.out.stderr.write(`[${text}]\n`);
    if (this.out.tty && this.#partial !== '') this.#drawPartial();
  }

  /** Leaves the cursor at the start of an empty line (before the summary). */
  end(): void {
    if (this.out.tty && this.#partial !== '') this.out.stdout.write(CLEAR_LINE);
    this.#partial = '';
  }

  #drawPartial(): void {
    // Only the tail that fits: a wrapped line could not be rewritten with a carriage return.
    const room = Math.max(10, this.out.columns - 3);
    const text = this.#partial.length > room ? `…${this.#partial.slice(-(room - 1))}` : this.#partial;
    this.out.stdout.write(`${CLEAR_LINE}\x1b[2m${text}\x1b[0m`);
  }
}
