/**
 * A captions worker: streams 16 kHz PCM16 chunks to a realtime session and returns caption cues,
 * one per line the service sends, in order, without duplicates (a line repeated after a reconnect
 * replaces the earlier one).
 *
 * @param {import('@soundclone/core').SoundClone} client
 * @param {AsyncIterable<Int16Array> | Iterable<Int16Array>} audio
 * @param {{ onCue?: (cue: { id: string, startMs: number, endMs: number, text: string }) => void }} [options]
 * @returns {Promise<{ sessionId: string, cues: Array<{ id: string, startMs: number, endMs: number, text: string }> }>}
 */
export async function captionAudio(client, audio, options = {}) {
  const session = await client.stt.realtime.connect();
  const cues = new Map();
  session.on('line', (line) => {
    const cue = { id: line.id, startMs: line.startMs ?? 0, endMs: line.endMs ?? 0, text: line.text };
    cues.set(line.id, cue);
    options.onCue?.(cue);
  });
  try {
    for await (const chunk of audio) session.writePcm16(chunk);
    const result = await session.finish();
    // The finish holds every line: it is the record, the events were the live view.
    for (const line of result.lines) cues.set(line.id, { id: line.id, startMs: line.startMs ?? 0, endMs: line.endMs ?? 0, text: line.text });
    return { sessionId: session.sessionId, cues: [...cues.values()] };
  } finally {
    session.close();
  }
}
