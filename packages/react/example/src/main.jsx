import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { useLiveCaptions } from '@soundclone/react';

// The backend (server.mjs) holds the key: a session per Start, a fresh token per reconnect.
const credentials = async ({ reason, sessionId }) =>
  (await fetch(reason === 'connect' ? '/api/session' : `/api/session/${sessionId}/token`, { method: 'POST' })).json();
const release = async (sessionId) => void (await fetch(`/api/session/${sessionId}/release`, { method: 'POST' }));

function Captions() {
  const c = useLiveCaptions({ credentials, release });
  return (
    <main>
      <button onClick={c.status === 'live' ? c.stop : c.start}>{c.status === 'live' ? 'Stop' : 'Start'}</button> <span id="status">{c.status}</span>
      <section id="captions">
        {c.lines.map((line) => <p key={line.id}>{line.text}</p>)}
        <i>{c.partial}</i>
      </section>
    </main>
  );
}

createRoot(document.getElementById('root')).render(<StrictMode><Captions /></StrictMode>);
