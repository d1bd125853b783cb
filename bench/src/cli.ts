/** The parts of the benchmark `--only` can pick; all of them by default. */
export const SECTIONS = ['resample', 'stream', 'quality', 'pcm16', 'session-encode', 'ring', 'realtime-capacity', 'realtime-latency', 'recognizer', 'captions', 'long-session', 'node-death'] as const;
/** The encode-path sections, whose targets the report states. */
export const ENCODE_SECTIONS: readonly Section[] = ['resample', 'stream', 'quality', 'pcm16', 'session-encode', 'ring'];
export type Section = (typeof SECTIONS)[number];

export interface CliOptions {
  readonly sections: ReadonlySet<Section>;
  /** benchmark.js maxTime per loop, seconds. */
  readonly maxTime: number;
  /** Times each benchmark.js loop is measured (alternating order, fastest kept). */
  readonly rounds: number;
  /** Only contenders whose id starts with one of these (all when empty). */
  readonly contenders: readonly string[];
  /** Minutes of audio each GC window streams. */
  readonly minutes: number;
  /** Write bench/results/ (default: only when every section ran, so a partial run keeps the full one). */
  readonly write: boolean;
  /** Smoke run: shorter everything. */
  readonly quick: boolean;
  /** Reference-server recognizers the realtime capacity bench runs with. */
  readonly recognizers: readonly string[];
  /** long-session: minutes of audio through the one session, and how many times real time. */
  readonly longMinutes: number;
  readonly longSpeed: number;
}

export const USAGE = `usage: node --expose-gc bench/dist/run.js [--only s1,s2] [--quick] [--minutes N] [--max-time S] [--write]
  sections: ${SECTIONS.join(', ')}
  --quick       1-minute GC windows, one 0.5 s round per benchmark (a smoke run; not for the record)
  --minutes N   audio streamed per GC window (default 10)
  --max-time S  benchmark.js seconds per loop (default 1)
  --rounds N    measure each loop N times in alternating order, keep the fastest (default 2)
  --contenders  comma-separated id prefixes, e.g. ours,speex-q7 (default: all)
  --write       write bench/results/ even for a partial run
  --recognizer  realtime-capacity: the reference server's recognizers, comma-separated (default deterministic;
                also auto, pocketsphinx)
  --long-minutes N  long-session: minutes of audio through the one session (default 60; --quick 10)
  --long-speed X    long-session: audio seconds per wall second (default 30)
  long-session  one realtime session, an hour of audio at 30x with a proxy cut every 30 s of audio and a server
                rotation every 5 min (about 2.5 min); at its default length, or with --write, also
                bench/results/long-session.md and .json
  node-death    the node-death series of pnpm bench:node-death: 3 nodes with Redis behind haproxy, kill -9 of
                a session's owner at 20 seeded points (--quick 3), a rolling SIGTERM restart under 20 sessions,
                sessions per core with Redis on vs off (about 3 min); where results are written, also
                bench/results/node-death.md
  captions      the caption churn/delay table of pnpm bench:captions: LibriVox speech at 1x through
                PocketSphinx (about 40 s); where results are written, also bench/results/captions.md`;

export function parseArgs(argv: readonly string[]): CliOptions {
  let sections = new Set<Section>(SECTIONS);
  let maxTime = 1;
  let rounds = 2;
  let contenders: string[] = [];
  let minutes = 10;
  let write: boolean | null = null;
  let quick = false;
  let recognizers = ['deterministic'];
  let longMinutes: number | null = null;
  let longSpeed = 30;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${arg} needs a value`);
      return v;
    };
    if (arg === '--only') {
      const picked = value().split(',').map((s) => s.trim()).filter((s) => s !== '');
      for (const s of picked) if (!(SECTIONS as readonly string[]).includes(s)) throw new UsageError(`unknown section '${s}'`);
      sections = new Set(picked as Section[]);
    } else if (arg === '--quick') {
      maxTime = 0.5;
      rounds = 1;
      minutes = 1;
      quick = true;
    } else if (arg === '--rounds') {
      rounds = Math.round(positive(arg, value()));
    } else if (arg === '--contenders') {
      contenders = value().split(',').map((s) => s.trim()).filter((s) => s !== '');
    } else if (arg === '--minutes') {
      minutes = positive(arg, value());
    } else if (arg === '--max-time') {
      maxTime = positive(arg, value());
    } else if (arg === '--recognizer') {
      recognizers = value().split(',').map((s) => s.trim()).filter((s) => s !== '');
    } else if (arg === '--long-minutes') {
      longMinutes = positive(arg, value());
    } else if (arg === '--long-speed') {
      longSpeed = positive(arg, value());
    } else if (arg === '--write') {
      write = true;
    } else if (arg === '--help' || arg === '-h') {
      throw new UsageError('');
    } else {
      throw new UsageError(`unknown argument '${arg}'`);
    }
  }
  const complete = sections.size === SECTIONS.length && contenders.length === 0;
  return { sections, maxTime, rounds, contenders, minutes, write: write ?? complete, quick, recognizers, longMinutes: longMinutes ?? (quick ? 10 : 60), longSpeed };
}

function positive(name: string, text: string): number {
  const n = Number(text);
  if (!(n > 0)) throw new UsageError(`${name} must be a positive number, got '${text}'`);
  return n;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}
