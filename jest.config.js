/** Jest runs the TypeScript sources as ESM through swc; `tsc --noEmit` type-checks separately. */

// Node processes started by the tests (bin/native-node.js) run the compiled build/, as an operator's
// node does; the global setup compiles it first whenever a source file is newer (test/globalSetup.mjs).

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } }],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // libp2p 3.x needs Promise.withResolvers, which Node 20 lacks.
  setupFiles: ['<rootDir>/p2p/polyfill.ts'],
  globalSetup: '<rootDir>/test/globalSetup.mjs',
  globalTeardown: '<rootDir>/test/globalTeardown.mjs',
  testTimeout: 60000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/summaryReporter.cjs'],
};
