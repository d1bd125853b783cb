import { request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../errors.js';
import { NODES } from '../protocol.js';

/**
 * Passing a request on to the node that holds its realtime session, the way a reverse proxy does:
 *
 *   REST      client --req--> this node --http.request(method, path, headers + hop)--> owner
 *                    <--res--            <--status, headers, body piped back---------
 *   upgrade   client --GET Upgrade--> this node --raw upgrade request + hop--> owner
 *                    <--owner's 101 written back--  and then both sockets piped both ways
 *             (a refused upgrade: the owner's HTTP answer is written back as it came)
 *
 * The hop header names this node; the owner never forwards such a request again (session-owners.ts).
 * A failure before the owner answered is ApiError 503 SERVICE_UNAVAILABLE SESSION_OWNER_UNAVAILABLE
 * (the caller answers it); after, the client's connection is ended.
 */

/** Connection-level headers a proxy does not pass on (RFC 9110 7.6.1), plus Host (set for the owner). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'host']);

function unavailable(cause: unknown): ApiError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new ApiError('SERVICE_UNAVAILABLE', `the server holding this realtime session could not be reached: ${reason}`, { reason: NODES.ownerUnavailableReason }, { cause, retryAfterSec: 1 });
}

function outgoingHeaders(headers: IncomingHttpHeaders, keepUpgrade: boolean, host: string, nodeId: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (HOP_BY_HOP.has(name) && !(keepUpgrade && (name === 'connection' || name === 'upgrade'))) continue;
    out[name] = value;
  }
  out['host'] = host;
  out[NODES.hopHeader] = nodeId;
  return out;
}

/**
 * Pipes the REST request to `ownerUrl` and its answer back; resolves with the owner's status once the
 * answer is passed on. `body`: the request's body when this node has read it already (a realtime
 * create learns its owner only from its Idempotency-Key, after reading the body); sent instead of
 * piping the request.
 */
export function forwardRequest(req: IncomingMessage, res: ServerResponse, ownerUrl: string, nodeId: string, body?: Buffer): Promise<number> {
  const target = new URL(req.url ?? '/', ownerUrl);
  const headers = outgoingHeaders(req.headers, false, target.host, nodeId);
  if (body !== undefined) {
    delete headers['transfer-encoding'];
    headers['content-length'] = String(body.length);
  }
  return new Promise<number>((resolve, reject) => {
    const upstream = request(target, { method: req.method ?? 'GET', headers });
    let answered = false;
    upstream.on('response', (answer) => {
      answered = true;
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name) && name !== 'transfer-encoding') headers[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, headers);
      answer.pipe(res);
      answer.on('error', () => res.destroy());
      res.on('close', () => {
        if (!answer.complete) answer.destroy();
        resolve(answer.statusCode ?? 502);
      });
    });
    upstream.on('error', (error) => {
      if (!answered) reject(unavailable(error));
      else res.destroy();
    });
    // An owner gone half-open answers nothing: give up rather than hold the client for ever.
    upstream.setTimeout(NODES.forwardIdleTimeoutMs, () => upstream.destroy(new Error(`no answer within ${NODES.forwardIdleTimeoutMs} ms`)));
    // The client went away first: the owner's request goes too.
    res.on('close', () => {
      if (!answered) upstream.destroy();
    });
    if (body !== undefined) upstream.end(body);
    else req.pipe(upstream);
  });
}

/**
 * Opens the same upgrade request on the owner and joins the two sockets once it answers 101 (written
 * back first, with what came after it). Resolves once the client's socket is joined or has the owner's
 * refusal; rejects (nothing written to the client) when the owner cannot be reached.
 */
export function forwardUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, ownerUrl: string, nodeId: string): Promise<void> {
  const target = new URL(req.url ?? '/', ownerUrl);
  return new Promise<void>((resolve, reject) => {
    const upstream = request(target, { method: 'GET', agent: false, headers: outgoingHeaders(req.headers, true, target.host, nodeId) });
    let settled = false;
    const clientGone = (): void => {
      if (!settled) upstream.destroy();
    };
    socket.once('close', clientGone);
    upstream.on('upgrade', (answer, owner, ownerHead) => {
      settled = true;
      socket.off('close', clientGone);
      socket.write(statusBlock(answer));
      if (ownerHead.length > 0) socket.write(ownerHead);
      if (head.length > 0) owner.write(head);
      owner.on('error', () => socket.destroy());
      socket.on('error', () => owner.destroy());
      owner.on('close', () => socket.destroy());
      socket.on('close', () => owner.destroy());
      owner.pipe(socket);
      socket.pipe(owner);
      resolve();
    });
    upstream.on('response', (answer) => {
      // The owner refused the upgrade (401, 404, 503...): its answer as it came, then the connection ends.
      settled = true;
      socket.off('close', clientGone);
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        const headers = pairs(answer.rawHeaders).filter(([name]) => !/^(content-length|transfer-encoding|connection)$/i.test(name));
        socket.end(Buffer.concat([
          Buffer.from(`HTTP/1.1 ${answer.statusCode ?? 502} ${answer.statusMessage ?? ''}\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`, 'latin1'),
          body,
        ]));
        resolve();
      });
      answer.on('error', () => {
        socket.destroy();
        resolve();
      });
    });
    const late = setTimeout(() => upstream.destroy(new Error(`no answer to the upgrade within ${NODES.forwardUpgradeTimeoutMs} ms`)), NODES.forwardUpgradeTimeoutMs);
    upstream.once('close', () => clearTimeout(late));
    upstream.on('upgrade', () => clearTimeout(late));
    upstream.on('response', () => clearTimeout(late));
    upstream.on('error', (error) => {
      if (settled) return;
      settled = true;
      socket.off('close', clientGone);
      reject(unavailable(error));
    });
    upstream.end();
  });
}

/** The status line and headers of an answer, as they came (raw names and order). */
function statusBlock(answer: IncomingMessage): string {
  const lines = pairs(answer.rawHeaders).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `HTTP/1.1 ${answer.statusCode ?? 101} ${answer.statusMessage ?? 'Switching Protocols'}\r\n${lines}\r\n`;
}

function pairs(raw: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i] as string, raw[i + 1] as string]);
  return out;
}
