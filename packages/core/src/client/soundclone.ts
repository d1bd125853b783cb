import { Transport } from '../http/transport.js';
import { signWebhookPayload } from '../webhooks/hmac.js';
import { createWebhookVerifier } from '../webhooks/verifier.js';
import { verifyWebhook } from '../webhooks/verify.js';
import { resolveOptions, type SoundCloneOptions } from './options.js';
import { Tts, User } from './resources/account.js';
import { Covers } from './resources/covers.js';
import { Downloads, Uploads } from './resources/media.js';
import { Voices } from './resources/voices.js';
import { Stt } from './stt/stt.js';

/**
 * The REST client. One transport (retries, timeouts, aborts, errors) under small resources
 * named after the spec's sections:
 *
 *   SoundClone
 *   ├─ voices      list, create (multipart), saveDesign, rename
 *   ├─ user        info
 *   ├─ tts         list (awaitable page, for-await items)
 *   ├─ covers      delete (any number of ids, batches of 500)
 *   ├─ stt         capabilities
 *   │  ├─ transcriptions  create, get, list, wait, watch
 *   │  └─ realtime        create, get, pause, finish
 *   ├─ uploads     create
 *   ├─ downloads   get (txt, json, srt, segmented_json, html, docx, pdf)
 *   └─ webhooks    verify, createVerifier, sign
 */
export class SoundClone {
  readonly voices: Voices;
  readonly user: User;
  readonly tts: Tts;
  readonly covers: Covers;
  readonly stt: Stt;
  readonly uploads: Uploads;
  readonly downloads: Downloads;
  readonly webhooks = {
    verify: verifyWebhook,
    createVerifier: createWebhookVerifier,
    sign: signWebhookPayload,
  } as const;

  constructor(options: SoundCloneOptions) {
    const transport = new Transport(resolveOptions(options));
    this.voices = new Voices(transport);
    this.user = new User(transport);
    this.tts = new Tts(transport);
    this.covers = new Covers(transport);
    this.stt = new Stt(transport, options.WebSocket === undefined ? {} : { WebSocket: options.WebSocket });
    this.uploads = new Uploads(transport);
    this.downloads = new Downloads(transport);
  }
}
