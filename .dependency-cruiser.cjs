/**
 * The layer rule of ARCHITECTURE.md ("## Layers"), checked by dependency-cruiser
 * (`npm run lint:deps`, part of `npm test`). Type-only imports count (`tsPreCompilationDeps`).
 *
 * Each folder of `src/` may import only the folders listed for it (and itself); `model` is the
 * leaf and imports nothing from `src/`. Any import cycle fails. The few imports that break a
 * layer on purpose are listed in `EXCEPTIONS`, each with its reason.
 */

/** Folders of `src/` each folder may import besides itself (everything may import `model`). */
const LAYERS = {
  model: [],
  text: ['model'],
  gguf: ['model'],
  platform: ['model'],
  tokens: ['model', 'text', 'gguf'],
  engines: ['model', 'platform', 'tokens', 'gguf'],
  vault: ['model'],
  db: ['model', 'vault'],
  jobs: ['model', 'db'],
  prompt: ['model', 'text', 'tokens', 'engines'],
  memory: ['model', 'text', 'platform', 'tokens', 'engines', 'db', 'jobs', 'prompt'],
  backup: ['model', 'text', 'db', 'memory'],
  importers: ['model', 'text'],
  page: ['model', 'text'],
  messaging: ['model'],
  core: ['model', 'text', 'gguf', 'platform', 'tokens', 'engines', 'db', 'jobs', 'prompt', 'memory', 'backup', 'importers', 'messaging', 'page', 'vault'],
  background: ['model', 'messaging', 'page'],
  ui: ['model', 'text', 'gguf', 'messaging', 'platform', 'prompt', 'page'],
};

/**
 * Imports allowed across a layer, each for a stated reason: `from` and `to` are path regexes.
 * Keep this list short; an entry is a debt, not a pattern.
 */
const EXCEPTIONS = [
  {
    from: '^src/db/schema\\.ts$',
    to: '^src/memory/long-term/retrieval/blocks\\.ts$',
    reason:
      "the v3 upgrade lays the vectors out with the store's own block codec, so a migrated database opens without a rebuild (blocks.ts imports nothing from db)",
  },
  {
    from: '^src/ui/lib/keys\\.ts$',
    to: '^src/memory/long-term/commands\\.ts$',
    reason:
      "a memory command can be sent with no model loaded: the panel uses the core's own command grammar (parseMemoryCommand), which needs the extraction language helpers",
  },
  {
    from: '^src/ui/lib/connect\\.ts$',
    to: '^src/db/errors\\.ts$',
    reason: "the panel recognizes the storage-full error by the core's code (STORAGE_FULL_CODE) until error codes live in src/model",
  },
];

const folderRule = ([folder, allowed]) => {
  return {
    name: `layer-${folder}`,
    comment: `src/${folder} may import only ${['model', ...allowed.filter((f) => f !== 'model')].join(', ') || 'nothing from src/'} (ARCHITECTURE.md, Layers)`,
    severity: 'error',
    from: { path: `^src/${folder}/` },
    to: { path: '^src/', pathNot: [`^src/(${[folder, ...allowed].join('|')})/`] },
  };
};

/** Layer rules with the exceptions carved out: one extra rule per folder that has exceptions. */
const layerRules = Object.entries(LAYERS).flatMap(([folder, allowed]) => {
  const base = folderRule([folder, allowed]);
  const own = EXCEPTIONS.filter((e) => e.from.startsWith(`^src/${folder}/`));
  if (own.length === 0) return [base];
  // Files with an exception are checked against everything but their excepted targets.
  return [
    { ...base, from: { path: base.from.path, pathNot: own.map((e) => e.from) } },
    ...own.map((e, i) => ({
      ...base,
      name: `${base.name}-except-${i + 1}`,
      comment: `${base.comment}; exception: ${e.reason}`,
      from: { path: e.from },
      to: { path: '^src/', pathNot: [...base.to.pathNot, e.to] },
    })),
  ];
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycle, type imports included: a cycle makes two modules one.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'model-is-a-leaf',
      comment: 'src/model imports no package but zod (and type-only packages): it is plain vocabulary.',
      severity: 'error',
      from: { path: '^src/model/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        dependencyTypesNot: ['type-only'],
        pathNot: ['node_modules/zod/'],
      },
    },
    {
      name: 'service-worker-stays-small',
      comment: 'The service worker (no DOM, no import()) never loads the panel, the core, storage or memory.',
      severity: 'error',
      from: { path: ['^entrypoints/background\\.ts$', '^src/background/', '^src/engines/webllm/service-worker\\.ts$'] },
      to: { path: ['^src/(ui|core|db|memory|jobs|prompt)/', 'node_modules/svelte/'] },
    },
    {
      name: 'protocol-values-only-in-transports',
      comment:
        'The message protocol module loads @webext-core/messaging (and webextension-polyfill, which throws outside an extension): only the transports import its values; the rest of the core imports its types. A shared constant belongs in src/model.',
      severity: 'error',
      from: { path: '^src/core/', pathNot: ['^src/core/(handlers|offscreen)\\.ts$'] },
      to: { path: '^src/messaging/protocol\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve is a typo or a missing dependency.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['node_modules', '^\\.wxt/', '^\\.output'] },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js', '.svelte', '.json'],
      exportsFields: ['exports'],
      conditionNames: ['types', 'import', 'browser', 'svelte', 'default'],
    },
  },
};
