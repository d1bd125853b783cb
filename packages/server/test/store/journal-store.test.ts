import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { JournalStore } from '../../src/store/journal/journal-store.js';
import type { Store } from '../../src/store/store.js';
import { describeStoreContract } from './contract.js';

const dirs: string[] = [];
const dirOf = new WeakMap<Store, string>();
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describeStoreContract('journal', {
  open: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'soundclone-store-contract-'));
    dirs.push(dir);
    const store = JournalStore.open(dir);
    dirOf.set(store, dir);
    return store;
  },
  reopen: async (store) => {
    const dir = dirOf.get(store) as string;
    await store.close();
    const again = JournalStore.open(dir);
    dirOf.set(again, dir);
    return again;
  },
});
