// The example's backend: its built page, and sessions and tokens minted with the Node SoundClone client
// (packages/web-audio/examples/token-server.mjs).
//
//   SOUNDCLONE_BASE_URL=http://127.0.0.1:8787 SOUNDCLONE_ACCESS_KEY=dev-key node example/server.mjs   (PORT, default 5173)
import { fileURLToPath } from 'node:url';
import { runExampleServer, startExampleServer as start } from '../../web-audio/examples/token-server.mjs';

const dist = fileURLToPath(new URL('./dist/', import.meta.url));

/** The backend for this example's built page. */
export const startExampleServer = (options) => start({ ...options, dist });

if (process.argv[1] === fileURLToPath(import.meta.url)) await runExampleServer(dist);
