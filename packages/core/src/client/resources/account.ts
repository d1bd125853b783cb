import { buildPath } from '../../http/path.js';
import type { CallOptions, Transport } from '../../http/transport.js';
import { LIMITS, PATHS, TTS_LIST_PARAMS_IN } from '../../protocol.js';
import type { TtsHistoryItem, TtsHistoryPage, TtsListParams, UserInfo } from '../../types/account.js';
import { PageRequest } from '../pagination.js';
import { parseTtsPage, parseUserInfo } from '../../parse/account.js';
import { Checks, requireParams } from '../validation/checks.js';
import { checkCallOptions } from '../../http/call-options.js';

/** Spec "GET /user/info": gets or creates the user. */
export class User {
  constructor(private readonly transport: Transport) {}

  async info(call?: CallOptions): Promise<UserInfo> {
    const { data } = await this.transport.request({ method: 'GET', path: buildPath(PATHS.userInfo), retry: 'repeatable' }, call);
    return parseUserInfo(data);
  }
}

/**
 * Text-to-speech history (spec "GET /tts/list"). `list()` is awaitable (one page) and async-iterable
 * (every item, newest first). Paging goes back with startBeforeTTSId = the previous page's
 * earliestHistoryItemId and stops when the INVERTED hasMore flag says no earlier item remains, on an
 * empty page, or when the cursor does not move (client/pagination.ts), so it never loops forever.
 */
export class Tts {
  constructor(private readonly transport: Transport) {}

  list(params: TtsListParams = {}, call?: CallOptions): PageRequest<TtsHistoryPage, TtsHistoryItem> {
    params = requireParams(params);
    checkCallOptions(call);
    const c = new Checks();
    c.integer('limit', params.limit, LIMITS.ttsListLimitMin, LIMITS.ttsListLimitMax);
    c.string('startBeforeTTSId', params.startBeforeTTSId, 256, { allowEmpty: true });
    c.throwIfAny();
    return new PageRequest<TtsHistoryPage, TtsHistoryItem>({
      fetch: (cursor) => this.page({ ...params, ...(cursor !== undefined ? { startBeforeTTSId: String(cursor) } : {}) }, call),
      items: (page) => page.list,
      next: (page) => (page.hasEarlierItems && page.earliestHistoryItemId !== '' ? page.earliestHistoryItemId : undefined),
    });
  }

  private async page(params: TtsListParams, call: CallOptions | undefined): Promise<TtsHistoryPage> {
    const values: Record<string, string | number | undefined> = {
      limit: params.limit,
      startBeforeTTSId: params.startBeforeTTSId === '' ? undefined : params.startBeforeTTSId,
    };
    // Spec: "Placement of limit and startBeforeTTSId (query string or body): not shown" (protocol.ts).
    const placement = TTS_LIST_PARAMS_IN === 'query' ? { query: values } : { json: values };
    const { data } = await this.transport.request({ method: 'GET', path: buildPath(PATHS.ttsList), ...placement, retry: 'repeatable' }, call);
    return parseTtsPage(data);
  }
}
