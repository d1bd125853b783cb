import { EnergyRecognizer, RecognizerError, type Recognizer, type RecognizerStream, type StreamEvent } from '@soundclone/server';

/**
 * Recognizers for the demo tests, behind the reference server's recognition seam: one that commits a
 * line for every stretch of audio, whatever it holds (a long transcript in a few seconds), and a
 * wrapper with a fixed number of slots, like PocketSphinx's decoder pool (RECOGNIZER_BUSY past it,
 * a slot back when the session's stream closes).
 */
export function chatty(everyMs: number): Recognizer {
  const batch = new EnergyRecognizer();
  return {
    id: 'chatty',
    recognize: (request) => batch.recognize(request),
    openStream(): RecognizerStream {
      const every = (16_000 * everyMs) / 1000;
      let samples = 0;
      let lines = 0;
      return {
        partial: '',
        push(block: Int16Array): StreamEvent[] {
          samples += block.length;
          const events: StreamEvent[] = [];
          while (samples >= (lines + 1) * every) {
            const startMs = lines * everyMs;
            lines += 1;
            const text = `caption line ${lines} keeps the newest words in view`.split(' ');
            const step = everyMs / text.length;
            events.push({
              type: 'segment',
              segment: {
                startMs, endMs: startMs + everyMs, speakerIndex: 0,
                words: text.map((w, i) => ({ text: w, startMs: startMs + i * step, endMs: startMs + (i + 1) * step, confidence: 0.9, speakerIndex: 0 })),
              },
              languageCode: 'en',
              languageProbability: 0.9,
            });
          }
          return events;
        },
        flush: () => [],
      };
    },
  };
}

export interface Slotted extends Recognizer {
  /** Streams open now (sessions holding a slot). */
  readonly open: number;
}

export function slotted(inner: Recognizer, slots: number): Slotted {
  let open = 0;
  return {
    id: `${inner.id}+${slots}-slots`,
    get open() {
      return open;
    },
    recognize: (request) => inner.recognize(request),
    openStream(options) {
      if (open >= slots) throw new RecognizerError('RECOGNIZER_BUSY', `all ${slots} recognizer slots are in use; try again when a session finishes`);
      const stream = inner.openStream(options);
      open += 1;
      let closed = false;
      return {
        get partial() {
          return stream.partial;
        },
        push: (block) => stream.push(block),
        flush: () => stream.flush(),
        close() {
          if (closed) return;
          closed = true;
          open -= 1;
          stream.close?.();
        },
      };
    },
  };
}
