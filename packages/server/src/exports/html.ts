import type { ExportContext } from './context.js';
import { exportSegments, segmentHeader } from './segmenting.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

/** A standalone HTML page: the title, then one paragraph per segment with its header in a span. */
export async function exportHtml({ title, transcript, options }: ExportContext): Promise<Buffer> {
  const paragraphs = exportSegments(transcript, options).map((segment) => {
    const header = segmentHeader(segment, options);
    const head = header === '' ? '' : `<span class="segment-header">${escapeHtml(header)}</span> `;
    return `<p class="segment">${head}${escapeHtml(segment.text)}</p>`;
  });
  const html = [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title></head><body>`,
    `<h1>${escapeHtml(title)}</h1>`,
    ...paragraphs,
    '</body></html>',
    '',
  ].join('\n');
  return Buffer.from(html, 'utf8');
}
