import type { ServerResponse } from 'node:http';

/** How a trickled body is sent: `bytes` at a time, `everyMs` apart. */
export interface BodyPace {
  readonly bytes: number;
  readonly everyMs: number;
}

/**
 * TEST-ONLY (the `trickle` fault, faults.ts): the status and headers go at once, the body then
 * `pace.bytes` at a time, `pace.everyMs` apart, as over a slow link. The client sees a response that
 * started and a body that takes its time: what its per-attempt timeout and its body reading must
 * cope with. Stops when the client goes away; at `signal` (the server closing) the connection is cut.
 * Resolves once the body was sent or given up, with every timer and listener it added removed.
 */
export function trickle(res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer, pace: BodyPace, signal: AbortSignal): Promise<void> {
  res.writeHead(status, { ...headers, 'Content-Length': String(body.length) });
  // Headers now, not with the first piece of the body.
  res.flushHeaders();
  return new Promise((resolve) => {
    let at = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      res.off('close', finish);
      signal.removeEventListener('abort', cut);
      resolve();
    };
    const cut = (): void => {
      res.destroy();
      finish();
    };
    const next = (): void => {
      timer = undefined;
      if (res.destroyed) return finish();
      const piece = body.subarray(at, at + pace.bytes);
      at += piece.length;
      if (at >= body.length) {
        res.end(piece);
        return finish();
      }
      res.write(piece);
      timer = setTimeout(next, pace.everyMs);
    };
    res.on('close', finish);
    if (signal.aborted) return cut();
    signal.addEventListener('abort', cut, { once: true });
    next();
  });
}
