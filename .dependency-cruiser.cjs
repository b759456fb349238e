/**
 * The module rules (docs/architecture.md), checked in `npm test`:
 * - no import cycles, type-only imports included;
 * - the base layers import no feature;
 * - the browser client imports only src/client/ and src/shared/; src/shared/ imports neither side.
 */
const BASE = '^src/(config\\.ts|logging|i18n|db|http|observability|runtime)(/|$)';
const FEATURE_FOLDERS = '^src/(?!(config\\.ts|logging|i18n|db|http|observability|runtime|client|shared|system\\.ts|server\\.ts|cluster\\.ts)(/|$))[^/]+/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'An import cycle (type-only imports count): split the shared piece into its own file or move it down a layer.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'base-imports-no-feature',
      severity: 'error',
      comment: 'config, logging, i18n, db, http, observability and runtime know no feature: features plug into them through the module contract (src/runtime/module.ts).',
      from: { path: BASE },
      to: { path: FEATURE_FOLDERS },
    },
    {
      name: 'client-only-client-and-shared',
      severity: 'error',
      comment: 'The browser client imports only src/client/ and src/shared/ (and packages).',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/(client|shared)/' },
    },
    {
      name: 'shared-imports-neither-side',
      severity: 'error',
      comment: 'src/shared/ runs in the browser and the server: it imports only itself (and packages).',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      // the build's virtual modules (each locale's words, scripts/i18n/vite-plugin.ts) exist only in the build
      to: { couldNotResolve: true, pathNot: '^virtual:client-words/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.tsx', '.js', '.mjs'] },
  },
};
