/**
 * @soundclone/core/rx: the session's results and transcription watching as rxjs Observables, for
 * applications that use rxjs. Built only from the public events and iterators of the main entry, so
 * the main entry never loads rxjs (an optional peer dependency, needed only here).
 *
 * ```ts
 * import { sessionStreams, watchTranscription } from '@soundclone/core/rx';
 * sessionStreams(session).lines$.subscribe((line) => render(line));
 * watchTranscription(client.stt.transcriptions, id).subscribe((task) => show(task.status));
 * ```
 *
 * @module
 */
export { sessionStreams, type SessionStreams, type StreamSource } from './rx/session-streams.js';
export { watchTranscription } from './rx/watch-transcription.js';
