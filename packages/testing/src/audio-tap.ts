import type { RunningServer } from '@soundclone/server';

/** A session's received audio reached `receivedSamples` (a frame was just accepted). */
export type AudioListener = (sessionId: string, receivedSamples: bigint) => void;

interface FeedingSessions {
  feed(session: { readonly id: string }, epoch: number, startSample: bigint, samples: Int16Array): { readonly kind: string; readonly receivedSamples?: bigint };
}

/**
 * Tells listeners, synchronously and in order, every time a realtime session of this server accepts
 * audio: the moment a fault keyed to a sample position must act on. The service has no published hook
 * for it, so this wraps the feed of the server's realtime sessions (`RunningServer.services`, which
 * the service documents as its own and changing): the kit and the service are released together, and
 * the kit's tests cover it.
 */
export function tapAudio(server: RunningServer): { add(listener: AudioListener): () => void } {
  const listeners = new Set<AudioListener>();
  const sessions = server.services.realtime as unknown as FeedingSessions;
  const feed = sessions.feed.bind(sessions);
  sessions.feed = (session, epoch, startSample, samples) => {
    const outcome = feed(session, epoch, startSample, samples);
    if (outcome.kind === 'accepted' && outcome.receivedSamples !== undefined) {
      for (const listener of [...listeners]) listener(session.id, outcome.receivedSamples);
    }
    return outcome;
  };
  return {
    add(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
