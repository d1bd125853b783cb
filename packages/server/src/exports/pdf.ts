import PDFDocument from 'pdfkit';
import type { ExportContext } from './context.js';
import { exportSegments, segmentHeader } from './segmenting.js';

/** PDF via pdfkit (standard Helvetica): the title, then each segment's header and text. */
export function exportPdf({ title, transcript, options }: ExportContext): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: 'A4', margin: 56, info: { Title: title } });
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    doc.font('Helvetica-Bold').fontSize(16).text(title);
    doc.moveDown();
    for (const segment of exportSegments(transcript, options)) {
      const header = segmentHeader(segment, options);
      if (header !== '') doc.font('Helvetica-Bold').fontSize(10).text(header);
      doc.font('Helvetica').fontSize(11).text(segment.text);
      doc.moveDown(0.5);
    }
    doc.end();
  });
}
