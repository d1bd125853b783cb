/**
 * The fixed vocabulary of the EnergyRecognizer. Some entries matter to other modules: NAMES are what
 * entity detection finds (category `name`), DISFLUENCIES are dropped by options.removeDisfluencies.
 */
export const WORDS = [
  'hello', 'world', 'alice', 'river', 'seven', 'green', 'table', 'um', 'morning', 'carol',
  'window', 'forty', 'quiet', 'bridge', 'paper', 'uh', 'silver', 'david', 'garden', 'number',
  'orange', 'travel', 'listen', 'market', 'yellow', 'bob', 'winter', 'circle', 'music', 'eleven',
  'station', 'planet', 'letter', 'copper', 'summer', 'signal', 'harbor', 'engine', 'pocket', 'valley',
  'rocket', 'candle', 'thunder', 'mirror', 'forest', 'ticket', 'cotton', 'meadow', 'anchor', 'velvet',
  'puzzle', 'lantern', 'marble', 'falcon', 'saddle', 'timber', 'harvest', 'compass', 'glacier', 'pepper',
  'ribbon', 'shadow', 'tunnel', 'whisper',
] as const;

export const NAMES: ReadonlySet<string> = new Set(['alice', 'bob', 'carol', 'david']);
export const DISFLUENCIES: ReadonlySet<string> = new Set(['um', 'uh']);
/** Text a long voiced burst becomes when options.includeSoundEvents is true. */
export const SOUND_EVENT_TEXT = '[sound]';
