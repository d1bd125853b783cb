import type { ExportOptions } from '../domain/transcriptions/request.js';
import type { Transcript } from '../domain/transcriptions/transcript.js';
import type { DownloadFormat } from '@soundclone/core/internal';

/** What every exporter gets: the task's public view (json), its transcript and the format's options. */
export interface ExportContext {
  readonly transcriptionId: string;
  readonly title: string;
  readonly view: Record<string, unknown>;
  readonly transcript: Transcript;
  readonly options: ExportOptions;
}

export type Exporter = (context: ExportContext) => Promise<Buffer>;

export function defaultExportOptions(format: DownloadFormat): ExportOptions {
  return { format, includeSpeakers: true, includeTimestamps: true };
}
