/**
 * @soundclone/testing: test an app that uses the Sound Clone SDK against the real reference service,
 * in-process: `startTestServer()` per test, speech from a script, faults from a script, and the
 * service's view of what happened (charges, stored audio, requests).
 */
export { startTestServer, type TestServer, type TestServerOptions, type Charges, type SessionRef } from './test-server.js';
export { ScriptedRecognizer } from './speech/scripted-recognizer.js';
export { placeScript, scriptEnd, DEFAULT_WORD_MS, type SpeechScript, type ScriptLine, type ScriptSupplements, type PlacedLine, type PlacedWord } from './speech/script.js';
export { scriptAudio, type ScriptAudioOptions } from './speech/script-audio.js';
export { EchoRecognizer } from './echo/echo-recognizer.js';
export { echoAudio, placeEcho, type EchoAudioOptions, type EchoLine } from './echo/echo-audio.js';
export { ALPHABET as ECHO_ALPHABET } from './echo/tone-code.js';
export { encodeLikeSdk } from './speech/encode.js';
export { toWav } from './speech/wav.js';
export { SAMPLE_RATE, toSamples, type AudioTime } from './speech/time.js';
export type { FaultStep, FaultTrigger, FaultAction } from './faults/steps.js';
export type { FaultRun, FiredStep } from './faults/player.js';
export { scenario, SCENARIOS, type ScenarioName, type ScenarioOptions } from './faults/scenarios.js';
export { idempotencyConflicts, type IdempotencyConflict } from './idempotency-conflicts.js';
export { redact, REDACTED, type LoggedRequest, type LoggedSocketEvent } from './redact.js';
export type { TestClock } from './time/virtual-clock.js';
export type { TimeOption, VirtualTimeOptions } from './time/options.js';
export type { Duration } from './time/duration.js';
export { TestingError, isTestingError, ReplayMismatchError, isReplayMismatchError, type TestingErrorCode } from './errors.js';
export { startPageServer, ISOLATION_HEADERS, type PageOptions, type PageFile, type TestPage } from './browser/page-server.js';
export { fakeMicrophoneArgs } from './browser/chromium.js';
export { startRecording, type Recording } from './cassette/recorder.js';
export { startReplayServer, type ReplayServer } from './cassette/replay-server.js';
export type { Cassette, CassetteEntry, HttpEntry, SocketEntry, SocketFrame, RecordedBody } from './cassette/cassette.js';
