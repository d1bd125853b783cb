import { describe, expect, it } from 'vitest';
import { PgStore } from '../../src/store/pg/pg-store.js';
import type { Store } from '../../src/store/store.js';
import { postgresForFile } from '../support/postgres.js';
import { describeStoreContract } from './contract.js';

const pgsql = postgresForFile();
const urlOf = new WeakMap<Store, string>();

describeStoreContract('postgres', {
  spending: 'async',
  open: async () => {
    const url = await pgsql.freshDatabase();
    const store = await PgStore.open(url);
    urlOf.set(store, url);
    return store;
  },
  reopen: async (store) => {
    const url = urlOf.get(store) as string;
    await store.close();
    const again = await PgStore.open(url);
    urlOf.set(again, url);
    return again;
  },
});
