import { buildPath } from '../../http/path.js';
import type { CallOptions, Transport } from '../../http/transport.js';
import { PATHS } from '../../protocol.js';
import type { Capabilities } from '../../types/media.js';
import { parseCapabilities } from '../../parse/media.js';
import { Realtime, type RealtimeDefaults } from './realtime.js';
import { Transcriptions } from './transcriptions.js';

/** Speech-to-text: capabilities, batch transcriptions with the shared History, real-time REST calls. */
export class Stt {
  readonly transcriptions: Transcriptions;
  readonly realtime: Realtime;

  constructor(private readonly transport: Transport, realtime: RealtimeDefaults = {}) {
    this.transcriptions = new Transcriptions(transport);
    this.realtime = new Realtime(transport, realtime);
  }

  /** Spec "GET /stt/capabilities": account state, rate, models and accepted option values. */
  async capabilities(call?: CallOptions): Promise<Capabilities> {
    const { data } = await this.transport.request({ method: 'GET', path: buildPath(PATHS.sttCapabilities), retry: 'repeatable' }, call);
    return parseCapabilities(data);
  }
}
