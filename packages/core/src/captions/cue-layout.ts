/**
 * Line breaking: words into at most `maxLines` lines of at most `maxLineChars` characters, at word
 * boundaries only. A word longer than a line stands alone on its line (never cut: the words of the cues
 * must equal the words of the transcript).
 */

/** The words broken into lines greedily; may return more than `maxLines` lines (the caller checks). */
export function breakLines(words: readonly string[], maxLineChars: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of words) {
    if (current === '') current = word;
    else if (current.length + 1 + word.length <= maxLineChars) current += ` ${word}`;
    else {
      lines.push(current);
      current = word;
    }
  }
  if (current !== '') lines.push(current);
  return lines;
}

/** Whether the words fit one cue's box. */
export function fitsBox(words: readonly string[], maxLines: number, maxLineChars: number): boolean {
  return breakLines(words, maxLineChars).length <= maxLines;
}

/** Characters a reader reads: the words with single spaces (line breaks count as the space they replace). */
export function readChars(words: readonly string[]): number {
  if (words.length === 0) return 0;
  let n = words.length - 1;
  for (const w of words) n += w.length;
  return n;
}

/** Splits text into words the way cues show them: runs of non-space characters. */
export function splitWords(text: string): string[] {
  const trimmed = text.trim();
  return trimmed === '' ? [] : trimmed.split(/\s+/u);
}
