/**
 * What sibling packages (the reference server, the CLI), bench/ and tests need from core beyond the
 * public entry; not a semver promise. Imported as `@soundclone/core/internal`.
 *
 * The wire facts (paths, headers, statuses, error codes, limits, the socket's frame codec, messages and
 * close codes, the webhook signature scheme) are written once, in ./protocol.ts; the reference server
 * imports them from here so the two sides cannot drift apart (docs/protocol.md "Where the wire facts live").
 */

export * from './protocol.js';
export type { TaskStatus } from './types/transcription.js';
