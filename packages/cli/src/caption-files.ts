import { closeSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { SegmentedWebVtt, SrtWriter, WebVttWriter, type CueChange } from '@soundclone/core';
import { CliUsageError } from './cli-error.js';

export interface CaptionFileOptions {
  readonly vtt?: string | undefined;
  readonly srt?: string | undefined;
  /** A directory for segmented WebVTT and its `captions.m3u8` playlist. */
  readonly hls?: string | undefined;
}

/**
 * The caption files a session writes while it runs. Each cue is one synchronous write, so whatever a
 * reader sees between two cues is a whole, valid file; HLS segments and the playlist are replaced by
 * rename, so a player polling the playlist never reads half of one.
 */
export class CaptionFiles {
  readonly #fds: number[] = [];
  readonly #writers: Array<{ write(change: CueChange): void; end(): void }> = [];
  readonly paths: string[] = [];

  /** Opens (truncates) every file first: a path that cannot be written fails before any session exists. */
  constructor(options: CaptionFileOptions) {
    if (options.vtt !== undefined) this.#writers.push(new WebVttWriter(this.#file(options.vtt, '--vtt')));
    if (options.srt !== undefined) this.#writers.push(new SrtWriter(this.#file(options.srt, '--srt')));
    if (options.hls !== undefined) {
      const dir = options.hls;
      try {
        mkdirSync(dir, { recursive: true });
      } catch (caught) {
        throw new CliUsageError(`cannot create the --hls directory ${dir}: ${(caught as Error).message}`);
      }
      const replace = (name: string, text: string): void => {
        const tmp = join(dir, `.${name}.tmp`);
        writeFileSync(tmp, text);
        renameSync(tmp, join(dir, name));
      };
      this.paths.push(join(dir, 'captions.m3u8'));
      this.#writers.push(new SegmentedWebVtt({ segment: (f) => replace(f.name, f.text), playlist: (text) => replace('captions.m3u8', text) }));
    }
  }

  get any(): boolean {
    return this.#writers.length > 0;
  }

  write(change: CueChange): void {
    for (const w of this.#writers) w.write(change);
  }

  /** Writes every cue still held and closes the files. */
  end(): void {
    for (const w of this.#writers) w.end();
    this.close();
  }

  close(): void {
    for (const fd of this.#fds.splice(0)) closeSync(fd);
  }

  #file(path: string, flag: string): (chunk: string) => void {
    let fd: number;
    try {
      fd = openSync(path, 'w');
    } catch (caught) {
      this.close();
      throw new CliUsageError(`cannot write ${flag} ${path}: ${(caught as Error).message}`);
    }
    this.#fds.push(fd);
    this.paths.push(path);
    return (chunk) => {
      writeSync(fd, chunk);
    };
  }
}
