import { useLiveCaptions } from '@soundclone/react';

/**
 * Live captions of the microphone: a Start/Stop button, the session's status, the lines heard so far
 * and the words of the line in progress. `credentials` asks the app's backend for a session (the key
 * stays there); `workletUrl` is where the app serves `@soundclone/web-audio/worklet-source`.
 */
export function Captions({ credentials, release, workletUrl }) {
  const c = useLiveCaptions({ credentials, release, capture: { workletUrl } });
  const live = c.status === 'live';
  return (
    <main>
      <button onClick={live ? c.stop : c.start} disabled={c.status === 'starting' || c.status === 'stopping'}>{live ? 'Stop' : 'Start'}</button>
      <output id="status">{c.status}</output>
      <section id="captions">
        {c.lines.map((line) => <p key={line.id} data-start-ms={line.startMs}>{line.text}</p>)}
        <i>{c.partial}</i>
      </section>
    </main>
  );
}
