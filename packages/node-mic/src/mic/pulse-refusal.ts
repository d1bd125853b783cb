import { execFile } from 'node:child_process';

/**
 * Why pvrecorder could not open a microphone, when the reason is that PulseAudio (or PipeWire's pulse
 * server) refused the connection. pvrecorder throws the same "PvRecorder failed to initialize." for a
 * refusal as for a missing server; libpulse's reason only reaches stderr, printed by ALSA's pulse
 * plugin. pactl reads the same client settings (PULSE_SERVER, PULSE_COOKIE, client.conf), so its
 * answer is the one pvrecorder got. Resolves to pactl's refusal line, or undefined when the server
 * answered, is absent, or pactl is not installed.
 */
export function pulseRefusal(timeoutMs = 3000): Promise<string | undefined> {
  if (process.platform !== 'linux') return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const child = execFile('pactl', ['info'], { timeout: timeoutMs }, (error, _stdout, stderr) => {
      if (error === null) return resolve(undefined);
      const line = stderr.split('\n').find((l) => /access denied|not authori[sz]ed/i.test(l));
      resolve(line?.trim());
    });
    child.on('error', () => resolve(undefined));
  });
}
