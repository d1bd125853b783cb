import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { include: ['test/vitest/**/*.test.js'], testTimeout: 60_000, hookTimeout: 60_000 },
});
