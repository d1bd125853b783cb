import { Document, HeadingLevel, Packer, Paragraph, TextRun } from 'docx';
import type { ExportContext } from './context.js';
import { exportSegments, segmentHeader } from './segmenting.js';

/** Word document via the `docx` library: a title heading, then one paragraph per segment. */
export async function exportDocx({ title, transcript, options }: ExportContext): Promise<Buffer> {
  const paragraphs = exportSegments(transcript, options).map((segment) => {
    const header = segmentHeader(segment, options);
    const runs = header === '' ? [] : [new TextRun({ text: `${header} `, bold: true })];
    return new Paragraph({ children: [...runs, new TextRun(segment.text)] });
  });
  const document = new Document({
    title,
    sections: [{ children: [new Paragraph({ text: title, heading: HeadingLevel.HEADING_1 }), ...paragraphs] }],
  });
  return Packer.toBuffer(document);
}
