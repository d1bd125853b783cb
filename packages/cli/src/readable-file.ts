import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { AudioSourceError } from '@soundclone/node-mic';

/**
 * Checks that `path` names a readable regular file, failing the way a captions source does
 * (AudioSourceError SOURCE_READ_FAILED, "PATH: why"), so a bad path costs no server, upload or session.
 */
export async function checkReadableFile(path: string): Promise<void> {
  try {
    const info = await stat(path);
    if (info.isDirectory()) throw new AudioSourceError('SOURCE_READ_FAILED', `${path}: is a directory, not an audio file`);
    if (!info.isFile()) throw new AudioSourceError('SOURCE_READ_FAILED', `${path}: not a regular file`);
    await access(path, constants.R_OK);
  } catch (caught) {
    if (caught instanceof AudioSourceError) throw caught;
    throw new AudioSourceError('SOURCE_READ_FAILED', `${path}: ${caught instanceof Error ? caught.message : String(caught)}`, { cause: caught });
  }
}
