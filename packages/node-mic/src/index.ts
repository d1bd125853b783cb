/**
 * @soundclone/node-mic: the system microphone and audio files as realtime sources.
 *
 *   openMicrophone() / wavFileSource() / rawPcmSource() / stdinSource()  ─►  AudioSource
 *   transcribeLive(client, source)  ─►  LiveTranscription (partials$, lines$, lineUpdates$, captions$, done)
 */
export { MicrophoneError, AudioSourceError, isMicrophoneError, isAudioSourceError, type MicrophoneErrorCode, type AudioSourceErrorCode } from './errors.js';
export { checkFormat, isWireFormat, type AudioSource, type AudioFormat, type AudioBlock } from './sources/audio-source.js';
export { wavFileSource, decodeWav, type DecodedWav, type FileSourceOptions } from './sources/wav.js';
export { rawPcmSource, stdinSource, type RawPcmOptions, type StdinOptions } from './sources/raw-pcm.js';
export { Pcm16Chunker } from './sources/pcm-chunker.js';
export { PushSource, type PushSourceOptions, type Overflow } from './mic/push-source.js';
export { openMicrophone, listMicrophones, resolveBackend, type Microphone, type MicrophoneOptions } from './mic/microphone.js';
export type { MicrophoneDevice, MicrophoneBackendName } from './mic/devices.js';
export { ResilientMicrophone, type CaptureItem, type CaptureBreak, type CaptureOpener, type OpenedCapture, type DeviceProbe, type DeviceLister, type RecoveryOptions } from './mic/resilient-microphone.js';
export { pumpToSession, type Pace, type PumpOptions, type PumpResult } from './live/pump.js';
export { LiveTranscription, transcribeLive, type LiveTranscriptionOptions, type CaptionEvent } from './live/live-transcription.js';
export { BUNDLED_SAMPLE } from './sample.js';
