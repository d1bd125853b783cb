import type { Capabilities, CapabilitiesAccount, CapabilitiesLimits, DeletedUpload, StorageUsage, Upload } from '../types/media.js';
import { parseDecimal } from '../util/decimal.js';
import { list, number, object, string, stringArray, type Json } from '../util/read.js';

/** Response parsers for uploads and capabilities (ours and spec "Capabilities"). */
export function parseUpload(value: unknown, path = 'data'): Upload {
  const u = object(value, path);
  const m = object(u['media'], `${path}.media`);
  return {
    uploadId: string(u['uploadId'], `${path}.uploadId`),
    filename: string(u['filename'], `${path}.filename`),
    contentType: string(u['contentType'], `${path}.contentType`),
    sizeBytes: parseDecimal(u['sizeBytes'], `${path}.sizeBytes`),
    createdAt: string(u['createdAt'], `${path}.createdAt`),
    media: {
      container: string(m['container'], `${path}.media.container`),
      durationMs: parseDecimal(m['durationMs'], `${path}.media.durationMs`),
      audioTracks: list(m['audioTracks'], `${path}.media.audioTracks`, (t, p) => {
        const track = object(t, p);
        return {
          index: number(track['index'], `${p}.index`),
          codec: string(track['codec'], `${p}.codec`),
          channels: number(track['channels'], `${p}.channels`),
          sampleRate: number(track['sampleRate'], `${p}.sampleRate`),
          durationMs: parseDecimal(track['durationMs'], `${p}.durationMs`),
        };
      }),
    },
  };
}

function pair(value: unknown, path: string): { total: bigint; used: bigint } | undefined {
  if (value === undefined) return undefined;
  const o = object(value, path);
  return { total: parseDecimal(o['total'], `${path}.total`), used: parseDecimal(o['used'], `${path}.used`) };
}

export function parseStorage(value: unknown, path: string): StorageUsage {
  const o = object(value, path);
  return { usedBytes: parseDecimal(o['usedBytes'], `${path}.usedBytes`), quotaBytes: parseDecimal(o['quotaBytes'], `${path}.quotaBytes`) };
}

export function parseDeletedUpload(value: unknown, path = 'data'): DeletedUpload {
  const o = object(value, path);
  return { uploadId: string(o['uploadId'], `${path}.uploadId`), storage: parseStorage(o['storage'], `${path}.storage`) };
}

/** Spec: "Contents of account beyond plan, rate and balances: not shown"; known parts are typed. */
function parseAccount(value: unknown, path: string): CapabilitiesAccount {
  const a = object(value, path);
  const { plan, rate, balances, storage, ...extra } = a;
  let parsedRate: CapabilitiesAccount['rate'];
  if (rate !== undefined) {
    const r = object(rate, `${path}.rate`);
    parsedRate = { ratePerMinute: parseDecimal(r['ratePerMinute'], `${path}.rate.ratePerMinute`), rateVersion: string(r['rateVersion'], `${path}.rate.rateVersion`) };
  }
  let parsedBalances: CapabilitiesAccount['balances'];
  if (balances !== undefined) {
    const b = object(balances, `${path}.balances`);
    const opt = (name: string): bigint | undefined => (b[name] === undefined ? undefined : parseDecimal(b[name], `${path}.balances.${name}`));
    const monthly = pair(b['monthlyCharacters'], `${path}.balances.monthlyCharacters`);
    const order = pair(b['orderCharacters'], `${path}.balances.orderCharacters`);
    const available = opt('availableCharacters');
    const reserved = opt('reservedCharacters');
    parsedBalances = {
      ...(available !== undefined ? { availableCharacters: available } : {}),
      ...(reserved !== undefined ? { reservedCharacters: reserved } : {}),
      ...(monthly !== undefined ? { monthlyCharacters: monthly } : {}),
      ...(order !== undefined ? { orderCharacters: order } : {}),
    };
  }
  return {
    plan: string(plan, `${path}.plan`),
    ...(parsedRate !== undefined ? { rate: parsedRate } : {}),
    ...(parsedBalances !== undefined ? { balances: parsedBalances } : {}),
    ...(storage !== undefined ? { storage: parseStorage(storage, `${path}.storage`) } : {}),
    extra,
  };
}

export function parseCapabilities(value: unknown, path = 'data'): Capabilities {
  const c = object(value, path);
  return {
    modelId: string(c['modelId'], `${path}.modelId`),
    modes: object(c['modes'], `${path}.modes`) as Capabilities['modes'] & Json,
    models: list(c['models'], `${path}.models`, (m, p) => {
      const model = object(m, p);
      return { modelId: string(model['modelId'], `${p}.modelId`), mode: string(model['mode'], `${p}.mode`), state: string(model['state'], `${p}.state`) };
    }),
    requestParameters: object(c['requestParameters'], `${path}.requestParameters`),
    realtimeParameters: object(c['realtimeParameters'], `${path}.realtimeParameters`),
    downloadFormats: stringArray(c['downloadFormats'], `${path}.downloadFormats`),
    account: parseAccount(c['account'], `${path}.account`),
    ...(c['limits'] !== undefined ? { limits: parseLimits(c['limits'], `${path}.limits`) } : {}),
  };
}

function parseLimits(value: unknown, path: string): CapabilitiesLimits {
  const l = object(value, path);
  const numbers = (group: unknown, p: string): Record<string, number> =>
    Object.fromEntries(Object.entries(object(group, p)).map(([name, n]) => [name, number(n, `${p}.${name}`)]));
  return {
    ...(l['http'] !== undefined ? { http: numbers(l['http'], `${path}.http`) } : {}),
    ...(l['socket'] !== undefined ? { socket: numbers(l['socket'], `${path}.socket`) } : {}),
  };
}
