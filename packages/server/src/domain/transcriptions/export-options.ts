import type { Violations } from '../../errors.js';
import { DOWNLOAD_FORMATS, type DownloadFormat, type ExportOptionsEntry, LIMITS } from '@soundclone/core/internal';
import { bool, int, num, oneOf, plainObject, unknownKeys } from '../validate.js';

/**
 * options.exportFormats and options.exportOptions (spec "exportOptions entry"): pre-generated formats,
 * and per-format controls that apply to the pre-generated file and to later downloads of that format.
 * An entry is core's ExportOptionsEntry with includeSpeakers and includeTimestamps resolved.
 */
export type ExportOptions = ExportOptionsEntry & Required<Pick<ExportOptionsEntry, 'includeSpeakers' | 'includeTimestamps'>>;

const EXPORT_OPTION_FIELDS = ['format', 'includeSpeakers', 'includeTimestamps', 'segmentOnSilenceLongerThanS', 'maxSegmentDurationS', 'maxSegmentChars', 'maxCharactersPerLine'];

export function validateExportFormats(v: Violations, value: unknown): DownloadFormat[] {
  const field = 'options.exportFormats';
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    v.add(field, 'must be an array of download formats');
    return [];
  }
  const seen = new Set<string>();
  for (const [i, f] of value.entries()) {
    if (v.stopChecking()) break;
    if (typeof f !== 'string' || !(DOWNLOAD_FORMATS as readonly string[]).includes(f)) v.add(`${field}[${i}]`, `must be one of ${DOWNLOAD_FORMATS.join(', ')}`);
    else if (seen.has(f)) v.add(`${field}[${i}]`, 'must not repeat a format');
    else seen.add(f);
  }
  return [...seen] as DownloadFormat[];
}

export function validateExportOptions(v: Violations, value: unknown): ExportOptions[] {
  const field = 'options.exportOptions';
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    v.add(field, 'must be an array of per-format objects');
    return [];
  }
  const out: ExportOptions[] = [];
  const seen = new Set<string>();
  value.forEach((entry, i) => {
    if (v.stopChecking()) return;
    const p = `${field}[${i}].`;
    if (!plainObject(entry)) {
      v.add(`${field}[${i}]`, 'must be an object');
      return;
    }
    unknownKeys(v, p, entry, EXPORT_OPTION_FIELDS);
    const before = v.count;
    const format = entry['format'] === undefined ? (v.add(`${p}format`, 'is required'), undefined) : oneOf(v, `${p}format`, entry['format'], DOWNLOAD_FORMATS);
    if (format !== undefined && seen.has(format)) v.add(`${p}format`, 'must not repeat a format of another entry');
    if (format !== undefined) seen.add(format);
    const includeSpeakers = bool(v, `${p}includeSpeakers`, entry['includeSpeakers']) ?? true;
    const includeTimestamps = bool(v, `${p}includeTimestamps`, entry['includeTimestamps']) ?? true;
    const silence = num(v, `${p}segmentOnSilenceLongerThanS`, entry['segmentOnSilenceLongerThanS'], 0, LIMITS.exportSecondsMax, { minExclusive: true });
    const maxDur = num(v, `${p}maxSegmentDurationS`, entry['maxSegmentDurationS'], 0, LIMITS.exportSecondsMax, { minExclusive: true });
    const maxChars = int(v, `${p}maxSegmentChars`, entry['maxSegmentChars'], 1, LIMITS.maxSegmentCharsMax);
    const perLine = int(v, `${p}maxCharactersPerLine`, entry['maxCharactersPerLine'], 1, LIMITS.maxCharactersPerLineMax);
    if (v.count > before || format === undefined) return;
    out.push({
      format,
      includeSpeakers,
      includeTimestamps,
      ...(silence !== undefined ? { segmentOnSilenceLongerThanS: silence } : {}),
      ...(maxDur !== undefined ? { maxSegmentDurationS: maxDur } : {}),
      ...(maxChars !== undefined ? { maxSegmentChars: maxChars } : {}),
      ...(perLine !== undefined ? { maxCharactersPerLine: perLine } : {}),
    });
  });
  return out;
}
