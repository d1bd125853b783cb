import { ok } from '../http/envelope.js';
import { asObject, readJson } from '../http/body.js';
import { parseMultipart } from '../http/multipart.js';
import { ApiError, Violations } from '../errors.js';
import { LIMITS, PATHS, sniffVoiceFile } from '@soundclone/core/internal';
import { resetInDays } from '../domain/accounts/accounts.js';
import { checkName, voiceView } from '../domain/accounts/voices.js';
import type { Route } from '../http/router.js';
import type { Services } from '../services.js';

/** Voices, user info, TTS history and covers (spec "Endpoints" GET /voices .. DELETE /cover). */
export function accountRoutes(s: Services): Route[] {
  return [
    { method: 'GET', path: PATHS.voices, handler: async ({ account }) => ok((await s.voices.list(account)).map(voiceView)) },

    {
      method: 'POST',
      path: PATHS.voicesCreate,
      handler: async ({ account, req }) => {
        const form = await parseMultipart(req, { maxFileBytes: LIMITS.voiceFileMaxBytes, maxFiles: LIMITS.voiceFilesMax });
        const v = new Violations();
        for (const key of form.fields.keys()) if (key !== 'name') v.add(key, 'is not a known part (expected name and files)');
        const names = form.fields.get('name') ?? [];
        if (names.length > 1) v.add('name', 'must be sent once');
        checkName(v, names[0], 'name');
        const files = form.files.filter((f) => f.field === 'files');
        for (const f of form.files) if (f.field !== 'files') v.add(f.field, 'is not a known file part (expected files)');
        if (files.length === 0) v.add('files', 'at least one file is required');
        if (form.tooManyFiles) v.add('files', `at most ${LIMITS.voiceFilesMax} files`);
        files.forEach((f, i) => {
          if (f.size > LIMITS.voiceFileMaxBytes) v.add(`files[${i}]`, `must be at most ${LIMITS.voiceFileMaxBytes} bytes (10 MB)`);
          if (sniffVoiceFile(f.head) === undefined) v.add(`files[${i}]`, 'must be mp3, wav or m4a (checked by content, not by name)');
        });
        v.throwIfAny();
        const voice = await s.voices.createClone(account, names[0] as string, files);
        return ok({ id: voice.id });
      },
    },

    {
      method: 'POST',
      path: PATHS.voicesDesignSave,
      handler: async ({ account, req }) => ok({ id: (await s.voices.saveDesign(account, asObject(await readJson(req)))).id }),
    },

    {
      method: 'PUT',
      path: PATHS.voicesRename,
      handler: async ({ account, req, params }) => {
        await s.voices.rename(account, params['id'] as string, asObject(await readJson(req)));
        return ok();
      },
    },

    {
      method: 'GET',
      path: PATHS.userInfo,
      handler: async ({ account }) => {
        const ledger = await s.store.accounts.ledger(account.id);
        if (ledger === undefined) throw new Error(`no ledger for account ${account.id}`);
        const c = ledger.chars;
        // Spec "User info": counters reflect what was used (seeded TTS items and settled STT charges).
        return ok({
          plan: account.plan.name,
          status: account.cancelled ? 'cancellation upon expiration' : 'active',
          resetInDays: resetInDays(ledger.periodEndsAt, s.clock.now()),
          benefit: {
            usedVoices: await s.voices.usedVoices(account),
            totalVoices: account.totalVoices,
            usedMonthlyChars: Number(c.monthlyUsed),
            totalMonthlyChars: Number(c.monthlyTotal),
            usedOrderChars: Number(c.orderUsed),
            totalOrderChars: Number(c.orderTotal),
          },
        });
      },
    },

    {
      method: 'GET',
      path: PATHS.ttsList,
      handler: async ({ account, req, query }) => {
        // Spec: placement of limit and startBeforeTTSId is not shown; both the query and a JSON body work.
        const body = asObject(await readJson(req));
        const params: { limit?: unknown; startBeforeTTSId?: unknown } = {};
        for (const key of ['limit', 'startBeforeTTSId'] as const) {
          const fromQuery = query.get(key) ?? undefined;
          const fromBody = body[key];
          if (fromQuery !== undefined && fromBody !== undefined && String(fromBody) !== fromQuery) {
            throw ApiError.invalidField(key, 'was given in the query and in the body with different values');
          }
          params[key] = fromBody ?? fromQuery;
        }
        return ok(s.tts.list(account, params));
      },
    },

    {
      method: 'DELETE',
      path: PATHS.cover,
      handler: async ({ account, req }) => ok(await s.covers.delete(account, asObject(await readJson(req)))),
    },
  ];
}
