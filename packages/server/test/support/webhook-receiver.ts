import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback webhook endpoint that answers 204 and records every delivery it received. */
export interface WebhookReceiver {
  readonly port: number;
  readonly url: string;
  readonly received: ReadonlyArray<{ readonly path: string; readonly eventId: string; readonly attempt: string; readonly body: { id: string; type: string; data: { transcriptionId: string; status: string } } }>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: Array<WebhookReceiver['received'][number]> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', eventId: String(req.headers['soundclone-event-id']), attempt: String(req.headers['soundclone-delivery-attempt']), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
