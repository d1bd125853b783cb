import type { ExportContext } from './context.js';
import { exportSegments } from './segmenting.js';

/** Spec: "The json download is the public transcription view" (no envelope). */
export async function exportJson({ view }: ExportContext): Promise<Buffer> {
  return Buffer.from(JSON.stringify(view, null, 2), 'utf8');
}

/**
 * segmented_json: `{ transcriptionId, languageCode, segments: [{ index, speakerId?, channelIndex,
 * startMs?, endMs?, text }] }` after exportOptions (speakers and times left out when switched off).
 */
export async function exportSegmentedJson({ transcriptionId, transcript, options }: ExportContext): Promise<Buffer> {
  const segments = exportSegments(transcript, options).map((s, index) => ({
    index,
    ...(options.includeSpeakers ? { speakerId: s.speakerId } : {}),
    channelIndex: s.channelIndex,
    ...(options.includeTimestamps ? { startMs: s.startMs, endMs: s.endMs } : {}),
    text: s.text,
  }));
  return Buffer.from(JSON.stringify({ transcriptionId, languageCode: transcript.languageCode, segments }, null, 2), 'utf8');
}
