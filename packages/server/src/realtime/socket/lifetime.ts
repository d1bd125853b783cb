import { recycleNoticeMs } from '@soundclone/core/internal';
// Real time even under a test's fake timers (util/real-timers.ts).
import { setTimeout, clearTimeout } from '../../util/real-timers.js';

/**
 * The server's limit on how long one socket lives (`realtimeTiming.socketLifetimeMs`), as hosted
 * services have (proxies, load balancers, deploys recycle connections). Counted from session.ready:
 *
 *   ready ──(lifetime − notice)──► socket.recycle { closeInMs: notice } ──(notice)──► audio.ack, close 4002
 *
 * notice = protocol.ts recycleNoticeMs(lifetime): min(10 s, lifetime / 4). A client that opens its next
 * socket on the notice replaces this one (close 4001) before the limit; one that ignores it is cut at the
 * limit right behind the exact acknowledgement. Both timers are cleared by stop(), which the connection
 * calls on every path that ends it.
 */
export class SocketLifetime {
  private noticeTimer: ReturnType<typeof setTimeout> | undefined;
  private limitTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly lifetimeMs: number,
    private readonly onNotice: (closeInMs: number) => void,
    private readonly onLimit: () => void,
  ) {}

  start(): void {
    this.stop();
    const notice = recycleNoticeMs(this.lifetimeMs);
    this.noticeTimer = setTimeout(() => {
      this.noticeTimer = undefined;
      this.onNotice(notice);
    }, this.lifetimeMs - notice);
    this.limitTimer = setTimeout(() => {
      this.limitTimer = undefined;
      this.onLimit();
    }, this.lifetimeMs);
  }

  stop(): void {
    if (this.noticeTimer !== undefined) clearTimeout(this.noticeTimer);
    if (this.limitTimer !== undefined) clearTimeout(this.limitTimer);
    this.noticeTimer = undefined;
    this.limitTimer = undefined;
  }
}
