import { MemoryStore } from '../../src/store/memory-store.js';
import { describeStoreContract } from './contract.js';

describeStoreContract('memory', { open: async () => new MemoryStore() });
