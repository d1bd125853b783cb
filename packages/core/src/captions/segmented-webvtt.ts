import type { Cue, CueChange } from './cue.js';
import { CueSequencer } from './cue-sequencer.js';
import { vttCueBlock } from './cue-writers.js';
import { CaptionError } from '../errors/caption-error.js';

export interface SegmentedWebVttOptions {
  /** Segment length on the audio clock, ms (default 6000, the HLS authoring guide's target). */
  readonly segmentMs?: number;
  /** Segment file names: `${prefix}${sequence}.vtt` (default `captions_`, sequence 5 digits). */
  readonly prefix?: string;
  /** Called with each closed segment file (write it before the playlist that names it). */
  readonly segment: (file: { readonly name: string; readonly text: string; readonly sequence: number }) => void;
  /** Called with the whole playlist after each segment (replace the playlist file with it). */
  readonly playlist: (text: string) => void;
}

/**
 * Live WebVTT for HLS players: fixed-length segments on the audio clock, each a complete WebVTT file
 * with the cues that overlap it (a cue crossing a boundary is in both, as HLS expects), and an m3u8
 * media playlist that grows a segment at a time and gets `#EXT-X-ENDLIST` at `end()`. A segment is
 * closed once a settled cue starts after it, so nothing can still arrive for it.
 */
export class SegmentedWebVtt {
  readonly #sequencer = new CueSequencer();
  readonly #segmentMs: number;
  readonly #prefix: string;
  readonly #options: SegmentedWebVttOptions;
  /** Released cues that may still overlap a segment not yet closed. */
  #open: Cue[] = [];
  #sequence = 0;
  readonly #entries: string[] = [];
  #ended = false;

  constructor(options: SegmentedWebVttOptions) {
    const segmentMs = options.segmentMs ?? 6000;
    if (!Number.isInteger(segmentMs) || segmentMs < 1000 || segmentMs > 60_000) throw new CaptionError('CAPTIONS_INVALID_OPTION', `segmentMs must be an integer from 1000 to 60000 (got ${String(segmentMs)})`);
    this.#segmentMs = segmentMs;
    this.#prefix = options.prefix ?? 'captions_';
    this.#options = options;
  }

  /** Segments closed so far. */
  get segments(): number {
    return this.#sequence;
  }

  write(change: CueChange): void {
    if (this.#ended) throw new CaptionError('CAPTIONS_INVALID_STATE', 'cue written after the segmented output ended');
    for (const cue of this.#sequencer.take(change)) {
      if (cue.text === '') continue;
      // Cues come in start order: every segment ending at or before this start is complete.
      while ((this.#sequence + 1) * this.#segmentMs <= cue.startMs) this.#close();
      this.#open.push(cue);
    }
  }

  /** Closes the remaining segments and ends the playlist. */
  end(): void {
    if (this.#ended) return;
    for (const cue of this.#sequencer.end()) if (cue.text !== '') this.#open.push(cue);
    const last = this.#open.reduce((m, c) => Math.max(m, c.endMs), 0);
    while (this.#sequence * this.#segmentMs < last) this.#close();
    this.#ended = true;
    this.#options.playlist(this.#playlist(true));
  }

  #close(): void {
    const from = this.#sequence * this.#segmentMs;
    const to = from + this.#segmentMs;
    const cues = this.#open.filter((c) => c.startMs < to && c.endMs > from);
    const name = `${this.#prefix}${String(this.#sequence).padStart(5, '0')}.vtt`;
    // The timestamp map ties cue times to the media timeline at 0 (audio clock 0 = MPEG-TS 0).
    const text = `WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n\n${cues.map(vttCueBlock).join('')}`;
    this.#options.segment({ name, text, sequence: this.#sequence });
    this.#entries.push(`#EXTINF:${(this.#segmentMs / 1000).toFixed(3)},\n${name}\n`);
    this.#sequence += 1;
    this.#open = this.#open.filter((c) => c.endMs > to);
    this.#options.playlist(this.#playlist(false));
  }

  #playlist(ended: boolean): string {
    const target = Math.ceil(this.#segmentMs / 1000);
    return `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:${String(target)}\n#EXT-X-MEDIA-SEQUENCE:0\n${this.#entries.join('')}${ended ? '#EXT-X-ENDLIST\n' : ''}`;
  }
}
