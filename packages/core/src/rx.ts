/**
 * @soundclone/core/rx: the session's results and transcription watching as rxjs Observables, for
 * applications that use rxjs. Built only from the public events and iterators of the main entry, so
 * the main entry never loads rxjs (an optional peer dependency, needed only here).
 */
export { sessionStreams, type SessionStreams, type StreamSource } from './rx/session-streams.js';
export { watchTranscription } from './rx/watch-transcription.js';
