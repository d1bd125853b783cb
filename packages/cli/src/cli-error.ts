import { SoundCloneError } from '@soundclone/core';

/** Bad command-line use: printed as one line with a hint, exit code 2. */
export class CliUsageError extends SoundCloneError {
  override name = 'CliUsageError';

  constructor(message: string) {
    super('CLI_USAGE', message);
  }
}
