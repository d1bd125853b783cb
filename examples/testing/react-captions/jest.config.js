/**
 * Native ESM (the kit and the SDK are ESM-only): no transform, run under
 * `node --experimental-vm-modules` (see the test:jest script).
 * @type {import('jest').Config}
 */
export default {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/jest/**/*.test.js'],
  transform: {},
  testTimeout: 60_000,
};
