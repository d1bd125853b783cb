import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { HEADERS } from '@soundclone/core/internal';
import { ApiError } from '../errors.js';
import { ID_PREFIXES } from '../protocol.js';
import { randomId } from '../util/ids.js';
import { failureBody } from './envelope.js';

/*
 * Refusals below the router: bytes the HTTP parser cannot make a request of are answered in the
 * failure envelope too (400 INPUT_INVALID), and the connection closed. The HTTP server wires these to
 * its 'connection' and 'clientError' events.
 */

/** CR and LF bytes before the request line past which a connection is refused (two empty lines). */
const BLANK_PREAMBLE_MAX_BYTES = 4;

/**
 * The HTTP parser skips empty lines before a request line (RFC 9112 asks servers to tolerate at least
 * one) and would wait for the rest until the headers timeout, so a client that sends only blank lines
 * got no answer. Past two empty lines the connection gets a 400 in the failure envelope and is closed.
 * Watching stops at the first other byte, so requests (and keep-alive requests after them) are untouched.
 */
export function refuseBlankLinePreamble(socket: Socket): void {
  let blank = 0;
  const watch = (chunk: Buffer): void => {
    let i = 0;
    while (i < chunk.length && (chunk[i] === 0x0d || chunk[i] === 0x0a)) i++;
    blank += i;
    if (i < chunk.length) {
      socket.off('data', watch);
      return;
    }
    if (blank <= BLANK_PREAMBLE_MAX_BYTES) return;
    socket.off('data', watch);
    if (socket.writable) socket.end(rawFailure('request', 'must start with a request line, not blank lines'), () => socket.destroy());
    else socket.destroy();
  };
  socket.on('data', watch);
}

/**
 * A request the HTTP parser cannot read (bad request line, bad header, bad chunking) is answered with a
 * 400 in the failure envelope, as every other refusal, and the connection closed. Header overflow (431)
 * and request timeout (408) keep Node's own answers; a socket that already got bytes or is gone is
 * only closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || (socket as Socket).bytesWritten > 0) {
    socket.destroy();
    return;
  }
  let answer: string;
  if (error.code === 'HPE_HEADER_OVERFLOW') answer = 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';
  else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') answer = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';
  else answer = rawFailure('request', 'must be a well-formed HTTP/1.1 request');
  socket.end(answer, () => socket.destroy());
}

/** A whole HTTP/1.1 400 INPUT_INVALID answer in the failure envelope, for refusals made below the router. */
function rawFailure(field: string, rule: string): string {
  const requestId = randomId(ID_PREFIXES.request);
  const body = failureBody(new ApiError('INPUT_INVALID', `${field}: ${rule}`, { violations: [{ field, rule }] }), requestId);
  return [
    'HTTP/1.1 400 Bad Request',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `${HEADERS.requestId}: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}
