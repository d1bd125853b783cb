import { basename } from 'node:path';
import { protocol } from '@soundclone/core/internal';

const PREFIX = 'soundclone captions ';

/**
 * The title a captions session gets without --title: the source's name, not its path. An installed
 * CLI's bundled sample, or any file deep in a tree, has a path longer than the service's title limit,
 * and a default must never be what makes a session fail validation. A name that is still too long is
 * cut at the limit. `-` (stdin) is named `stdin`.
 */
export function defaultTitle(source: string): string {
  const name = source === '-' ? 'stdin' : source === 'microphone' || source === 'sample' ? source : basename(source);
  // By code points, as the limit counts: a cut never splits a character.
  return Array.from(`${PREFIX}${name}`).slice(0, protocol.LIMITS.titleMaxChars).join('');
}
