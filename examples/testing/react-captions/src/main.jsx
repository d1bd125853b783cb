import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Captions } from './Captions.jsx';

// The backend (src/backend.js) holds the key: a session per Start, a fresh token per reconnect.
const credentials = async ({ reason, sessionId }) =>
  (await fetch(reason === 'connect' ? '/api/session' : `/api/session/${sessionId}/token`, { method: 'POST' })).json();
const release = async (sessionId) => void (await fetch(`/api/session/${sessionId}/release`, { method: 'POST' }));

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <Captions credentials={credentials} release={release} workletUrl="/capture-worklet.js" />
  </StrictMode>,
);
