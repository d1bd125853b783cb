import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { speechWav } from './wav.js';

/**
 * A loopback media host for mediaUrl tests: serves a WAV, errors, redirects and loops, and counts the
 * requests it received (a refused destination must see none).
 */
export interface MediaHost {
  readonly port: number;
  readonly origin: string;
  readonly hits: string[];
  close(): Promise<void>;
}

export async function startMediaHost(redirectTargets: Record<string, string> = {}): Promise<MediaHost> {
  const hits: string[] = [];
  const wav = speechWav();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.push(url.pathname);
    const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
    if (url.pathname === '/ok.wav') {
      res.writeHead(200, { 'Content-Type': 'audio/wav' }).end(wav);
    } else if (url.pathname === '/missing') {
      res.writeHead(404).end('no');
    } else if (url.pathname === '/forbidden') {
      res.writeHead(403).end('no');
    } else if (url.pathname === '/busy') {
      res.writeHead(503).end('later');
    } else if (url.pathname === '/limited') {
      res.writeHead(429).end('later');
    } else if (url.pathname === '/page.html') {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>not audio</html>');
    } else if (url.pathname === '/loop') {
      res.writeHead(302, { Location: '/loop' }).end();
    } else if (chain !== null) {
      const n = Number(chain[1]);
      res.writeHead(302, { Location: n <= 1 ? '/ok.wav' : `/chain/${n - 1}` }).end();
    } else if (url.pathname.startsWith('/redirect/')) {
      const target = redirectTargets[url.pathname.slice('/redirect/'.length)];
      res.writeHead(target === undefined ? 404 : 302, target === undefined ? {} : { Location: target }).end();
    } else if (url.pathname === '/hook') {
      res.writeHead(200).end('ok');
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A host that answers 200 and then trickles one byte every 100 ms, forever (until closed). */
export async function startTrickleHost(): Promise<{ port: number; close(): Promise<void> }> {
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'audio/wav' });
    const timer = setInterval(() => res.write('x'), 100);
    timers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearInterval(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
