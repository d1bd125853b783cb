/**
 * Chromium's command-line flags for a fake microphone that plays `wavPath` (absolute, or relative to
 * the browser's working directory) once per getUserMedia, then silence, with the permission prompt
 * granted. Any 16-bit PCM WAV rate works (Chromium converts; the track is 44.1 kHz stereo). The file
 * starts when getUserMedia opens the device, so lead the WAV with a second of silence. Pass them to
 * `chromium.launch({ args })` with `--headless --no-sandbox --disable-gpu` in a container.
 */
export function fakeMicrophoneArgs(wavPath: string): string[] {
  if (typeof wavPath !== 'string' || wavPath === '' || wavPath.includes('%')) throw new TypeError(`fakeMicrophoneArgs: a path to a WAV file (got ${JSON.stringify(wavPath)})`);
  return ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wavPath}%noloop`, '--autoplay-policy=no-user-gesture-required'];
}
