import type { ExportContext } from './context.js';
import { clock, exportSegments, wrapText } from './segmenting.js';

/**
 * SubRip cues. Spec: "Without timestamps (for example alignmentLevel none) the srt output has no timed
 * cues and is empty": segments without times are skipped, and includeTimestamps false gives an empty
 * file too. Speakers prefix the cue text (`speaker_1: `) when includeSpeakers is on.
 */
export async function exportSrt({ transcript, options }: ExportContext): Promise<Buffer> {
  if (!options.includeTimestamps) return Buffer.alloc(0);
  const cues: string[] = [];
  for (const segment of exportSegments(transcript, options)) {
    if (segment.startMs === null || segment.endMs === null) continue;
    const prefix = options.includeSpeakers && segment.speakerId !== null ? `${segment.speakerId}: ` : '';
    const lines = wrapText(prefix + segment.text, options.maxCharactersPerLine);
    cues.push(`${cues.length + 1}\n${clock(segment.startMs, ',')} --> ${clock(segment.endMs, ',')}\n${lines.join('\n')}\n`);
  }
  return Buffer.from(cues.join('\n'), 'utf8');
}
