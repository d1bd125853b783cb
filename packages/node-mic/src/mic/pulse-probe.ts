import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Asks PulseAudio (or PipeWire's pulse server) about one source: is it there, is it suspended, at
 * what rate. Why ask at all: when a source goes away the server moves its recording streams to the
 * fallback source, so the capture process never fails and audio would silently come from elsewhere.
 * null when pactl cannot answer (then nothing is concluded).
 */
export async function probePulseSource(name: string): Promise<{ present: boolean; suspended: boolean; sampleRate?: number } | null> {
  let stdout: string;
  try {
    ({ stdout } = await run('pactl', ['list', 'short', 'sources'], { timeout: 2000 }));
  } catch {
    return null;
  }
  for (const line of stdout.split('\n')) {
    const [, source = '', , spec = '', state = ''] = line.split('\t');
    if (source !== name) continue;
    const rate = /(\d+)Hz/.exec(spec);
    return { present: true, suspended: state.trim() === 'SUSPENDED', ...(rate ? { sampleRate: Number(rate[1]) } : {}) };
  }
  return { present: false, suspended: false };
}
