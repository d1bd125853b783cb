import { ApiError } from '../errors.js';
import { ok } from '../http/envelope.js';
import { asObject, readBody, readJson } from '../http/body.js';
import { API_PREFIX, type DownloadFormat, HEADERS, LIMITS, PATHS, REALTIME_PATHS } from '@soundclone/core/internal';
import { DOWNLOAD_CONTENT_TYPES, NODES } from '../protocol.js';
import { download } from '../domain/transcriptions/downloads.js';
import { requireIdempotencyKey } from '../domain/idempotency.js';
import { isText, NOT_TEXT } from '../domain/validate.js';
import { validateRealtimeCreate } from '../realtime/session/options.js';
import { isTerminal, taskView } from '../domain/transcriptions/tasks.js';
import { uploadView } from '../domain/transcriptions/uploads.js';
import { EXPORTERS } from '../exports/index.js';
import type { Handler, RequestContext, Route } from '../http/router.js';
import type { Reply } from '../http/envelope.js';
import { forwardRequest } from '../nodes/forward.js';
import { ownerUnreachable } from '../nodes/socket-elsewhere.js';
import { wasForwarded, type Located } from '../nodes/session-owners.js';
import type { Session } from '../realtime/session/sessions.js';
import { storedSessionView } from '../realtime/session/view.js';
import type { Services } from '../services.js';
import { capabilities } from './capabilities.js';

/** Speech-to-text: capabilities, uploads, transcriptions, downloads, realtime session REST. */
export function sttRoutes(s: Services): Route[] {
  const replayHeaders = (replayed: boolean): Record<string, string> => (replayed ? { [HEADERS.idempotentReplayed]: 'true' } : {});
  /**
   * A call about one live realtime session (its audio lives in one node's memory): done here when this
   * node holds it; else forwarded to the node that does, body unread, or, once that node is gone and
   * the session ended, `ended` answers from the store (nodes/session-owners.ts).
   */
  const ownerBound = (local: (session: Session, context: RequestContext) => Promise<Reply>, ended: (located: Extract<Located, { kind: 'ended' }>) => Reply): Handler => async (context) => {
    const id = context.params['sessionId'] as string;
    const session = s.realtime.find(context.account, id);
    if (session !== undefined) return local(session, context);
    const located = await s.owners.locate(id, context.account.id, wasForwarded(context.req.headers));
    if (located.kind === 'not-found') throw ApiError.notFound('realtime session');
    if (located.kind === 'take') {
      if (s.takeover === undefined) throw new Error('a session to take over without the live state');
      const adopted = await s.takeover.adopt(located.row, located.force);
      return adopted.kind === 'session' ? local(adopted.session, context) : ended({ kind: 'ended', row: located.row, task: adopted.task });
    }
    if (located.kind === 'forward') {
      try {
        return { kind: 'answered', status: await forwardRequest(context.req, context.res, located.url, s.nodeId) };
      } catch (error) {
        // The owner is known dead: answered from the store once the session ended; else taken over
        // here now. A GET is then answered here (it has no body); any other call is not done here (its
        // body may have gone to the dead owner already): 503 with Retry-After: 0, and the client's
        // retry finds the session here at once.
        const next = s.takeover !== undefined && ownerUnreachable(error) ? await s.owners.unreachable(located.row) : undefined;
        if (next?.kind === 'ended') return ended(next);
        if (next?.kind !== 'take' || s.takeover === undefined) throw error;
        const adopted = await s.takeover.adopt(located.row, true).catch(() => undefined);
        if (adopted?.kind === 'ended') return ended({ kind: 'ended', row: located.row, task: adopted.task });
        if (adopted === undefined) throw error;
        if (context.req.method === 'GET') return local(adopted.session, context);
        throw new ApiError('SERVICE_UNAVAILABLE', 'this realtime session was just taken over by this server from one that died; send the request again', { reason: NODES.ownerUnavailableReason }, { cause: error, retryAfterSec: 0 });
      }
    }
    return ended(located);
  };
  const storedView = (located: Extract<Located, { kind: 'ended' }>): Reply => ok(storedSessionView(located.row.id, located.task, s.clock.now()));
  const closed = (): Reply => {
    throw new ApiError('SESSION_CLOSED', 'the session is finished');
  };
  return [
    { method: 'GET', path: PATHS.sttCapabilities, handler: async ({ account }) => {
        const ledger = await s.store.accounts.ledger(account.id);
        if (ledger === undefined) throw new Error(`no ledger for account ${account.id}`);
        return ok(capabilities(account, ledger, await s.voices.usedVoices(account), await s.uploads.usage(account), await s.realtime.limitsView(account), s.limits));
      },
    },

    {
      method: 'POST',
      path: PATHS.uploads,
      handler: async ({ account, req, query }) => {
        const filename = query.get('filename') ?? undefined;
        if (filename !== undefined && !isText(filename)) throw ApiError.invalidField('filename', NOT_TEXT);
        // A declared length past the quota is refused before the body is read (the connection then closes).
        const declared = Number(req.headers['content-length']);
        if (Number.isSafeInteger(declared) && declared > 0 && declared <= LIMITS.uploadMaxBytes) await s.uploads.checkRoom(account, declared);
        const bytes = await readBody(req, LIMITS.uploadMaxBytes);
        const upload = await s.uploads.create(account, bytes, req.headers['content-type'], filename, s.clock.now());
        return ok(uploadView(upload));
      },
    },

    {
      method: 'DELETE',
      path: PATHS.upload,
      handler: async ({ account, params }) => {
        const upload = await s.uploads.delete(account, params['uploadId'] as string);
        return ok({ uploadId: upload.id, deleted: true, storage: await s.uploads.usage(account) });
      },
    },

    {
      method: 'POST',
      path: PATHS.transcriptions,
      handler: async ({ account, req, requestId }) => {
        const key = requireIdempotencyKey(req.headers['idempotency-key']);
        const body = asObject(await readJson(req));
        const { data, replayed } = await s.transcriptions.create(account, body, key, requestId);
        return ok(data, { headers: replayHeaders(replayed) });
      },
    },

    { method: 'GET', path: PATHS.transcriptions, handler: async ({ account, query }) => ok(await s.tasks.list(account, query)) },

    {
      method: 'GET',
      path: PATHS.transcription,
      handler: async ({ account, params }) => ok(taskView(await s.tasks.get(account, params['transcriptionId'] as string))),
    },

    {
      method: 'GET',
      path: PATHS.transcriptionDownload,
      handler: async ({ account, params }) => {
        const task = await s.tasks.get(account, params['transcriptionId'] as string);
        const format = params['format'] as string;
        const body = await download(task, format, EXPORTERS, s.tasks.exportsOf(task.id));
        const extension = format === 'segmented_json' ? 'segments.json' : format;
        return {
          kind: 'raw',
          body,
          contentType: DOWNLOAD_CONTENT_TYPES[format as DownloadFormat],
          headers: { 'Content-Disposition': `attachment; filename="${task.id}.${extension}"` },
        };
      },
    },

    {
      method: 'POST',
      path: PATHS.realtimeSessions,
      handler: async ({ account, req, res, requestId }) => {
        const key = requireIdempotencyKey(req.headers['idempotency-key']);
        const body = asObject(await readJson(req));
        const request = validateRealtimeCreate(body);
        const created = await s.realtime.create(account, body, request, key, requestId);
        const socketUrl = s.baseUrl.replace(/^http/, 'ws') + API_PREFIX + REALTIME_PATHS.socket;
        if (created.kind === 'here') {
          const data = { ...s.realtime.view(created.session), socket: { url: socketUrl, ...s.realtime.issueToken(created.session) } };
          return ok(data, { headers: replayHeaders(created.replayed) });
        }
        // The key is kept for a session another node holds: its replay is the owner's to answer (the
        // live view and a fresh token, as the first create answered). Once the session ended, the
        // store answers: its stored view, and a token the socket endpoint refuses as it refuses any
        // ended session (docs/protocol.md "Several nodes").
        const located = await s.owners.locate(created.sessionId, account.id, wasForwarded(req.headers));
        if (located.kind === 'forward') return { kind: 'answered', status: await forwardRequest(req, res, located.url, s.nodeId, Buffer.from(JSON.stringify(body))) };
        const adopted = located.kind === 'take' && s.takeover !== undefined ? await s.takeover.adopt(located.row, located.force) : undefined;
        if (adopted?.kind === 'session') {
          return ok({ ...s.realtime.view(adopted.session), socket: { url: socketUrl, ...s.realtime.issueToken(adopted.session) } }, { headers: replayHeaders(true) });
        }
        // Not found: an engine that keeps no session rows across a restart (the journal), whose start
        // failed every session that was running; the task says how it ended.
        const task = adopted?.kind === 'ended' ? adopted.task : located.kind === 'ended' ? located.task : await s.store.tasks.get(created.taskId);
        if (task === undefined || task.ownerId !== account.id || !isTerminal(task.status)) throw new Error(`realtime session ${created.sessionId} is kept with its key but neither held nor ended`);
        const data = { ...storedSessionView(created.sessionId, task, s.clock.now()), socket: { url: socketUrl, ...s.realtime.issueToken({ id: created.sessionId }) } };
        return ok(data, { headers: replayHeaders(true) });
      },
    },

    {
      // Ours: a fresh socket token for a live session, so a browser page reconnecting after its token
      // expired gets one from its backend (docs/protocol.md "URL and authentication").
      method: 'POST',
      path: PATHS.realtimeSocketToken,
      handler: ownerBound(async (session) => {
        const socketUrl = s.baseUrl.replace(/^http/, 'ws') + API_PREFIX + REALTIME_PATHS.socket;
        return ok({ url: socketUrl, ...s.realtime.issueToken(session) });
      }, closed),
    },

    {
      method: 'GET',
      path: PATHS.realtimeSession,
      handler: ownerBound(async (session) => ok(s.realtime.view(session)), storedView),
    },

    {
      // TEST-ONLY: the samples the session stored, raw PCM16 LE, when the server retains them.
      method: 'GET',
      path: REALTIME_PATHS.debugAudio,
      handler: ownerBound(async (session) => {
        const stored = session.audio.storedAudio();
        if (stored === undefined) throw new ApiError('NOT_FOUND', 'stored audio is kept only when the server runs with retainRealtimeAudioSamples (test-only)');
        return { kind: 'raw', body: Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength), contentType: 'audio/L16; rate=16000; channels=1' };
      }, () => {
        throw new ApiError('NOT_FOUND', 'the stored audio ended with the server that held the session');
      }),
    },

    {
      method: 'POST',
      path: PATHS.realtimePause,
      handler: ownerBound(async (session, { req }) => {
        s.realtime.pause(session, asObject(await readJson(req)));
        return ok(s.realtime.view(session));
      }, () => {
        throw new ApiError('SESSION_CLOSED', 'the session is finished or finishing');
      }),
    },

    {
      method: 'POST',
      path: PATHS.realtimeFinish,
      // Finishing an ended session answers its view, as a second finish does.
      handler: ownerBound(async (session, { req }) => {
        await s.realtime.finish(session, asObject(await readJson(req)));
        return ok(s.realtime.view(session));
      }, storedView),
    },
  ];
}
