import { nodeDeathText, runNodeDeath, writeNodeDeathResult } from './series.js';

/**
 * `pnpm bench:node-death` (also a section of `pnpm bench`): the node-death series (kill -9 of a
 * session's owner at seeded points, `--kills N`, default 20), a rolling SIGTERM restart of the 3 nodes
 * under 20 sessions, and sessions per node core with the live state in Redis on vs off (series.ts says
 * how each is measured). `--quick` runs 3 kills, 5 sessions and a small capacity level and writes
 * nothing; otherwise the tables go to bench/results/node-death.md.
 */
const quick = process.argv.includes('--quick');
const killsFlag = process.argv.indexOf('--kills');
const kills = killsFlag >= 0 ? Number(process.argv[killsFlag + 1]) : quick ? 3 : 20;
const text = nodeDeathText(await runNodeDeath({ kills, rollingSessions: quick ? 5 : 20, quick }));
process.stdout.write(text);
if (!quick) await writeNodeDeathResult(text, 'pnpm bench:node-death');
