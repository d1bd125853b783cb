import { LIMITS } from '../../protocol.js';
import { readNodeFile } from '../../util/node-file.js';
import { Checks, codePoints } from '../validation/checks.js';
import { SNIFF_BYTES, sniffVoiceFile, type VoiceFileType } from './sniff.js';

/**
 * Voice sample inputs for voices.create: a Node file path, bytes (Uint8Array, Buffer), a Blob or File,
 * or bytes with a chosen file name. Everything is checked before sending (spec "POST /voices/tts",
 * "Limits"): name present and at most 32 characters, 1 to 25 files, each at most 10 MB and mp3, wav or
 * m4a by content. All violations at once.
 */
export type VoiceFileInput = string | Uint8Array | Blob | { readonly data: Uint8Array | Blob; readonly filename: string };

export interface LoadedVoiceFile {
  readonly blob: Blob;
  readonly filename: string;
  readonly type: VoiceFileType;
}

const MIME: Record<VoiceFileType, string> = { wav: 'audio/wav', mp3: 'audio/mpeg', m4a: 'audio/mp4' };

export async function loadVoiceFiles(name: unknown, files: readonly VoiceFileInput[] | undefined): Promise<LoadedVoiceFile[]> {
  const c = new Checks();
  if (typeof name !== 'string' || name.trim() === '') c.add('name', 'is required and must be a non-empty string');
  else if (codePoints(name) > LIMITS.voiceNameMaxChars) c.add('name', `must be at most ${LIMITS.voiceNameMaxChars} characters`);

  const list = Array.isArray(files) ? files : [];
  // A single path or Blob instead of a list is told as such, not as "no file".
  if (files !== undefined && !Array.isArray(files)) c.add('files', 'must be an array of files (paths, bytes, Blobs or Files)');
  else if (list.length === 0) c.add('files', 'at least one file is required');
  if (list.length > LIMITS.voiceFilesMax) c.add('files', `at most ${LIMITS.voiceFilesMax} files`);

  const loaded: LoadedVoiceFile[] = [];
  for (const [i, input] of list.entries()) {
    const field = `files[${i}]`;
    const source = await toBlob(input, c, field);
    if (source === undefined) continue;
    if (source.blob.size > LIMITS.voiceFileMaxBytes) {
      c.add(field, `must be at most ${LIMITS.voiceFileMaxBytes} bytes (10 MB)`);
      continue;
    }
    const head = new Uint8Array(await source.blob.slice(0, SNIFF_BYTES).arrayBuffer());
    const type = sniffVoiceFile(head);
    if (type === undefined) {
      c.add(field, 'must be mp3, wav or m4a (checked by content, not by name)');
      continue;
    }
    const filename = source.filename ?? `sample-${i + 1}.${type}`;
    loaded.push({ blob: source.blob.type === '' ? new Blob([source.blob], { type: MIME[type] }) : source.blob, filename, type });
  }
  c.throwIfAny();
  return loaded;
}

async function toBlob(input: VoiceFileInput, c: Checks, field: string): Promise<{ blob: Blob; filename?: string } | undefined> {
  if (typeof input === 'string') return readPath(input, c, field);
  if (input instanceof Uint8Array) return { blob: new Blob([input as Uint8Array<ArrayBuffer>]) };
  if (typeof Blob !== 'undefined' && input instanceof Blob) {
    const name = (input as { name?: unknown }).name;
    return typeof name === 'string' && name !== '' ? { blob: input, filename: name } : { blob: input };
  }
  if (input !== null && typeof input === 'object' && 'data' in input) {
    if (typeof input.filename !== 'string' || input.filename.trim() === '') {
      c.add(`${field}.filename`, 'is required and must be a non-empty string');
      return undefined;
    }
    const inner = await toBlob(input.data, c, field);
    return inner === undefined ? undefined : { blob: inner.blob, filename: input.filename };
  }
  c.add(field, 'must be a file path, bytes, a Blob or a File');
  return undefined;
}

async function readPath(path: string, c: Checks, field: string): Promise<{ blob: Blob; filename: string } | undefined> {
  const result = await readNodeFile(path, LIMITS.voiceFileMaxBytes, `must be at most ${LIMITS.voiceFileMaxBytes} bytes (10 MB)`);
  if (result.ok) return { blob: result.blob, filename: result.filename };
  c.add(field, result.problem);
  return undefined;
}
