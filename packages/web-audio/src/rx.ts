// @soundclone/web-audio/rx: the capture and caption cues as rxjs Observables. A separate entry, so a
// page that uses only the main entry (`createLiveCaptions`, `capture.on(...)`) ships no rxjs.
export { captureStreams, type CaptureStreams } from './rx/capture-streams.js';
export { captionCues, type CueSource } from './rx/caption-cues.js';
