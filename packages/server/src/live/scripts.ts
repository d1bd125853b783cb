/**
 * The live state's Lua scripts (Redis runs each atomically). Keys of one session share the hash tag
 * `{rs_…}`, so a Redis Cluster keeps them on one shard:
 *
 *   fence  the fencing token: INCR on every take; never expires while the session lives
 *   lease  "<nodeId>:<token>", PX leaseTtlMs: the owner renews it; gone = nobody holds the session
 *   meta   JSON: cursors, epoch, state, anchor (where the open segment starts), the create request
 *   open   the open segment's PCM16 (little-endian), from meta.anchor to meta.received
 *   lines  committed lines, one JSON each, in order
 *   all    TEST-ONLY (audio retention): every sample received
 *
 * Every write of a session checks the fence first: a node whose token is not the current one writes
 * nothing (and answers 0, on which it lets the session go).
 */

/** Create (new session, meta given) or take (existing session): KEYS lease, fence, meta; ARGV nodeId, ttlMs, mode, meta. */
export const TAKE = `
if ARGV[3] == 'create' then
  if redis.call('EXISTS', KEYS[3]) == 1 then return {0, 'exists'} end
  redis.call('SET', KEYS[3], ARGV[4])
else
  if redis.call('EXISTS', KEYS[3]) == 0 then return {0, 'missing'} end
  if ARGV[3] == 'take' then
    local holder = redis.call('GET', KEYS[1])
    if holder then return {0, holder} end
  end
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. token, 'PX', ARGV[2])
return {1, tostring(token)}
`;

/** Renew leases: KEYS lease1, fence1, lease2, fence2, ...; ARGV ttlMs, holder1, token1, holder2, token2, ... Returns 1 (held) or 0 (lost) per pair. */
export const RENEW = `
local out = {}
for i = 1, #KEYS, 2 do
  if redis.call('GET', KEYS[i + 1]) == ARGV[i + 2] then
    redis.call('SET', KEYS[i], ARGV[i + 1], 'PX', ARGV[1])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
`;

/**
 * One durable step of a session: KEYS fence, meta, open, lines, all; ARGV token, meta, audio, cutBytes,
 * retain ('1'/'0'), line1, line2, ... The audio is appended, then `cutBytes` dropped from the front of
 * the open segment (a line committed: the segment now starts later), the lines added, the meta set.
 */
export const WRITE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if string.len(ARGV[3]) > 0 then
  redis.call('APPEND', KEYS[3], ARGV[3])
  if ARGV[5] == '1' then redis.call('APPEND', KEYS[5], ARGV[3]) end
end
local cut = tonumber(ARGV[4])
if cut > 0 then
  local rest = redis.call('GETRANGE', KEYS[3], cut, -1)
  redis.call('SET', KEYS[3], rest)
end
for i = 6, #ARGV do redis.call('RPUSH', KEYS[4], ARGV[i]) end
redis.call('SET', KEYS[2], ARGV[2])
return 1
`;

/** The session ended (settled in the database): KEYS fence, meta, open, lines, all, lease; ARGV token, keepFenceMs. */
export const END = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** Let a lease go (this node closes): KEYS lease; ARGV holder. */
export const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export function sessionKeys(sessionId: string): { fence: string; lease: string; meta: string; open: string; lines: string; all: string } {
  const tag = `sc:rs:{${sessionId}}`;
  return { fence: `${tag}:fence`, lease: `${tag}:lease`, meta: `${tag}:meta`, open: `${tag}:open`, lines: `${tag}:lines`, all: `${tag}:all` };
}
