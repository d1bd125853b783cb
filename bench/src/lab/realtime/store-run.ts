import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { collectStoreCapacity, storeCapacityText } from './store-capacity.js';

/**
 * `pnpm bench:realtime-store`: realtime sessions per core with the state in memory and in PostgreSQL
 * (store-capacity.ts says what it measures). `--quick` runs a smoke-sized level and writes nothing;
 * otherwise the table goes to bench/results/realtime-store.md.
 */
const quick = process.argv.includes('--quick');
const text = storeCapacityText(await collectStoreCapacity({ quick }));
process.stdout.write(text);
if (!quick) writeFileSync(fileURLToPath(new URL('../../../results/realtime-store.md', import.meta.url)), `# pnpm bench:realtime-store (${new Date().toISOString().slice(0, 10)})\n\n${text}`);
