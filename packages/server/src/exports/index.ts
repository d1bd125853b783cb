import type { DownloadFormat } from '@soundclone/core/internal';
import type { Exporter } from './context.js';
import { exportDocx } from './docx.js';
import { exportHtml } from './html.js';
import { exportJson, exportSegmentedJson } from './json.js';
import { exportPdf } from './pdf.js';
import { exportSrt } from './srt.js';
import { exportTxt } from './txt.js';

export { defaultExportOptions, type ExportContext } from './context.js';

/** One exporter per download format (spec "Capabilities" downloadFormats). */
export const EXPORTERS: Record<DownloadFormat, Exporter> = {
  txt: exportTxt,
  json: exportJson,
  srt: exportSrt,
  segmented_json: exportSegmentedJson,
  html: exportHtml,
  docx: exportDocx,
  pdf: exportPdf,
};
