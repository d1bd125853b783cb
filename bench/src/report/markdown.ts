/** A Markdown table padded to column width, so the same text reads well in a terminal and renders on GitHub. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[], rightAlign: readonly boolean[] = []): string {
  const widths = header.map((h, c) => Math.max(width(h), ...rows.map((r) => width(r[c] ?? ''))));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, c) => (rightAlign[c] ? padStart(cell, widths[c]) : padEnd(cell, widths[c]))).join(' | ')} |`;
  const rule = `|${widths.map((w, c) => (rightAlign[c] ? `${'-'.repeat(w + 1)}:` : `${'-'.repeat(w + 2)}`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Display width: code points (the tables use − × µ ≥, all one column wide). */
function width(text: string): number {
  return [...text].length;
}

function padEnd(text: string, w: number): string {
  return text + ' '.repeat(Math.max(0, w - width(text)));
}

function padStart(text: string, w: number): string {
  return ' '.repeat(Math.max(0, w - width(text))) + text;
}

/** Three significant digits, no exponent: 1234 → "1234", 12.34 → "12.3", 0.1234 → "0.123". */
export function sig3(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  const decimals = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return value.toFixed(decimals);
}

/** A signed figure with a real minus sign, e.g. "−0.02". */
export function signed(value: number, decimals: number): string {
  const text = value.toFixed(decimals);
  return text.startsWith('-') ? `−${text.slice(1)}` : text;
}

export const NONE = '–';
