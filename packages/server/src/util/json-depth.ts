/** Ours: the deepest nesting of objects and arrays a JSON request body may have. */
export const JSON_MAX_DEPTH = 64;

/**
 * True when `text` opens more than `max` nested objects or arrays. A linear scan of the raw text that
 * skips string contents, so a hostile body is refused before JSON.parse or any recursive walk
 * (validation, hashing, serialising) could exhaust the stack. Malformed text is left to JSON.parse.
 */
export function jsonTooDeep(text: string, max = JSON_MAX_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
