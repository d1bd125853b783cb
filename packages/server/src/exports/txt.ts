import type { ExportContext } from './context.js';
import { exportSegments, segmentHeader, wrapText } from './segmenting.js';

/**
 * Plain text: per segment a header `[HH:MM:SS.mmm - HH:MM:SS.mmm] speaker_1:` (each part as enabled;
 * spec: "the txt segment header shows both"), then the text wrapped at maxCharactersPerLine, then a
 * blank line.
 */
export async function exportTxt({ transcript, options }: ExportContext): Promise<Buffer> {
  const blocks = exportSegments(transcript, options).map((segment) => {
    const header = segmentHeader(segment, options);
    const lines = wrapText(segment.text, options.maxCharactersPerLine);
    return (header === '' ? lines : [header, ...lines]).join('\n');
  });
  return Buffer.from(blocks.length === 0 ? '' : blocks.join('\n\n') + '\n', 'utf8');
}
