import { ApiError } from '../../errors.js';
import { DOWNLOAD_FORMATS, type DownloadFormat } from '@soundclone/core/internal';
import { defaultExportOptions } from '../../exports/context.js';
import type { Exporter } from '../../exports/context.js';
import { taskView, type Task } from './tasks.js';

/**
 * Transcript downloads (ours: GET /stt/transcriptions/{id}/download/{format}). exportFormats are
 * pre-generated at completion; any other format is generated on first download and cached, always
 * with the task's exportOptions entry for that format (spec: "An entry applies to the pre-generated
 * file and to later downloads of that format").
 */
export async function renderExport(task: Task, format: DownloadFormat, exporters: Record<DownloadFormat, Exporter>): Promise<Buffer> {
  if (task.transcript === null) throw new ApiError('TRANSCRIPT_NOT_READY', `transcription is ${task.status}; downloads exist once it is COMPLETED or PARTIAL`, { status: task.status });
  const options = task.options?.exportOptions.find((o) => o.format === format) ?? defaultExportOptions(format);
  return exporters[format]({ transcriptionId: task.id, title: task.title, view: taskView(task), transcript: task.transcript, options });
}

export async function download(task: Task, format: string, exporters: Record<DownloadFormat, Exporter>, cache: Map<DownloadFormat, Buffer>): Promise<Buffer> {
  if (!(DOWNLOAD_FORMATS as readonly string[]).includes(format)) throw ApiError.invalidField('format', `must be one of ${DOWNLOAD_FORMATS.join(', ')}`);
  if (task.status !== 'COMPLETED' && task.status !== 'PARTIAL') {
    throw new ApiError('TRANSCRIPT_NOT_READY', `transcription is ${task.status}; downloads exist once it is COMPLETED or PARTIAL`, { status: task.status });
  }
  const known = format as DownloadFormat;
  // json is the live public view (status, billing), so it is rendered on every download.
  if (known === 'json') return renderExport(task, known, exporters);
  const cached = cache.get(known);
  if (cached !== undefined) return cached;
  const rendered = await renderExport(task, known, exporters);
  cache.set(known, rendered);
  return rendered;
}
