import { Observable } from 'rxjs';
import type { Transcriptions, WatchOptions } from '../client/stt/transcriptions.js';
import type { TranscriptionTask } from '../types/transcription.js';

/**
 * transcriptions.watch() as an Observable: the task each time its status changes (the first read
 * included), complete after the terminal status, an error on a failed read. Polling starts on
 * subscribe and stops on unsubscribe (the read in flight is aborted).
 */
export function watchTranscription(transcriptions: Pick<Transcriptions, 'watch'>, transcriptionId: string, options: Omit<WatchOptions, 'signal'> = {}): Observable<TranscriptionTask> {
  return new Observable<TranscriptionTask>((subscriber) => {
    const stop = new AbortController();
    const changes = transcriptions.watch(transcriptionId, { ...options, signal: stop.signal });
    void (async () => {
      try {
        for await (const task of changes) subscriber.next(task);
        subscriber.complete();
      } catch (error) {
        if (!stop.signal.aborted) subscriber.error(error);
      }
    })();
    return () => stop.abort();
  });
}
