import { buildPath } from '../../http/path.js';
import type { CallOptions, Transport } from '../../http/transport.js';
import { LIMITS, PATHS } from '../../protocol.js';
import type { Voice, VoiceId } from '../../types/account.js';
import { list } from '../../util/read.js';
import { parseVoice, parseVoiceId } from '../../parse/account.js';
import { Checks, codePoints, requireParams } from '../validation/checks.js';
import { loadVoiceFiles, type VoiceFileInput } from '../voices/voice-files.js';

export interface CreateVoiceParams {
  /** At most 32 characters. */
  readonly name: string;
  /** 1 to 25 mp3, wav or m4a files, each at most 10 MB: paths (Node), bytes, Blobs or Files. */
  readonly files: readonly VoiceFileInput[];
}

export interface SaveDesignParams {
  /** The designId delivered in the callback of the design-generate step. */
  readonly designId: string;
  readonly name: string;
}

/**
 * Voices (spec "GET /voices", "POST /voices/tts", "POST /voices/design/save", "PUT /voices/rename/{id}").
 * Retries: list and rename repeat safely; create and saveDesign make a new voice each time they arrive,
 * so they are retried only when the service cannot have acted on them (README "Retries").
 */
export class Voices {
  constructor(private readonly transport: Transport) {}

  async list(call?: CallOptions): Promise<Voice[]> {
    const { data } = await this.transport.request({ method: 'GET', path: buildPath(PATHS.voices), retry: 'repeatable' }, call);
    return list(data, 'data', parseVoice);
  }

  /** Multipart create; name, count, size and content type are checked first (ValidationError). */
  async create(params: CreateVoiceParams, call?: CallOptions): Promise<VoiceId> {
    params = requireParams(params);
    const files = await loadVoiceFiles(params.name, params.files);
    const form = new FormData();
    form.append('name', params.name);
    for (const file of files) form.append('files', file.blob, file.filename);
    const { data } = await this.transport.request({ method: 'POST', path: buildPath(PATHS.voicesCreate), body: form, retry: 'once' }, call);
    return parseVoiceId(data);
  }

  async saveDesign(params: SaveDesignParams, call?: CallOptions): Promise<VoiceId> {
    params = requireParams(params);
    const c = new Checks();
    if (typeof params.designId !== 'string' || params.designId === '') c.add('designId', 'is required and must be a non-empty string');
    checkName(c, params.name);
    c.throwIfAny();
    const { data } = await this.transport.request(
      { method: 'POST', path: buildPath(PATHS.voicesDesignSave), json: { designId: params.designId, name: params.name }, retry: 'once' },
      call,
    );
    return parseVoiceId(data);
  }

  /** Renaming to the same name twice leaves the same state, so it is retried like a read. */
  async rename(id: string, name: string, call?: CallOptions): Promise<void> {
    const c = new Checks();
    // Spec: the path id is a Long.
    if (typeof id !== 'string' || !/^[0-9]{1,19}$/.test(id)) c.add('id', 'must be a decimal voice id (Long)');
    checkName(c, name);
    c.throwIfAny();
    await this.transport.request({ method: 'PUT', path: buildPath(PATHS.voicesRename, { id }), json: { name }, retry: 'repeatable' }, call);
  }
}

function checkName(c: Checks, name: unknown): void {
  if (typeof name !== 'string' || name.trim() === '') c.add('name', 'is required and must be a non-empty string');
  else if (codePoints(name) > LIMITS.voiceNameMaxChars) c.add('name', `must be at most ${LIMITS.voiceNameMaxChars} characters`);
}
