import { Type } from 'typebox';
import { isUnderAllowedRoots, listShareFiles, resolveShareRoot } from '../../fileshare/local-share.js';
import { type AdapterOutput, defineAdapter, PermanentFailure } from '../adapter.js';

/** Extensions document_converter and html_to_markdown can read. */
/** Every kind document_converter reads. */
export const documentExtensions = [
  '.pdf',
  '.docx',
  '.pptx',
  '.xlsx',
  '.html',
  '.htm',
  '.md',
  '.markdown',
  '.txt',
];

export const fileshareEnumerator = defineAdapter({
  type: 'fileshare_enumerator',
  group: 'fileshare',
  summary: 'List the files of a share (one message per file) for fileshare_fetcher.',
  description:
    'Provider `local`: a directory on this machine (or a mounted SMB/NFS share) under one of the `fileshare_roots` ' +
    'setting directories; symlinks are not followed and hidden files are skipped. The root comes from the config or from ' +
    'the input payload `root`. Emits one `{provider, root, path, name, size, modified_at}` per file, sorted by path, ' +
    'routed to the step destination (fan-out).',
  config: Type.Object(
    {
      provider: Type.Literal('local', {
        default: 'local',
        description: 'where the files are: `local` (a directory)',
      }),
      root: Type.Optional(
        Type.String({ minLength: 1, description: 'directory to list; the payload `root` wins' }),
      ),
      extensions: Type.Array(Type.String({ pattern: '^\\.[A-Za-z0-9]+$' }), {
        default: documentExtensions,
        description: 'file extensions to list (with the dot); empty lists every file',
      }),
      recursive: Type.Boolean({ default: true, description: 'descend into sub-directories' }),
      max_files: Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        default: 10_000,
        description: 'stop after this many files',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    root: Type.Optional(Type.String({ description: 'directory to list (overrides the config)' })),
  }),
  output: Type.Object({
    provider: Type.Literal('local'),
    root: Type.String({ description: 'the resolved share root' }),
    path: Type.String({ description: 'file path relative to the root, `/`-separated' }),
    name: Type.String(),
    size: Type.Integer({ minimum: 0 }),
    modified_at: Type.String({ format: 'date-time' }),
  }),
  fanOut: true,
  checkSettings: (config, settings) =>
    config.root !== undefined && !isUnderAllowedRoots(config.root, settings.fileshare_roots)
      ? [
          {
            code: 'E211',
            field: ['root'],
            message: `share root ${config.root} is outside the allowed roots (${settings.fileshare_roots.join(', ') || 'none'})`,
            remediation:
              'Name a directory under one of the fileshare_roots, or add it to WEIR_FILESHARE_ROOTS and restart.',
          },
        ]
      : [],
  create: (config, resources) => {
    const extensions = config.extensions.map((extension) => extension.toLowerCase());
    return async (payload, context) => {
      const requested = typeof payload.root === 'string' && payload.root ? payload.root : config.root;
      if (!requested)
        throw new PermanentFailure('no share root: set `root` in the step config or the input payload');
      const root = await resolveShareRoot(requested, resources.settings.fileshare_roots);
      const files = listShareFiles(root, {
        extensions,
        recursive: config.recursive,
        maxFiles: config.max_files,
        signal: context.signal,
      });
      async function* outputs(): AsyncGenerator<AdapterOutput> {
        for await (const file of files) {
          yield {
            payload: { provider: 'local', root, ...file },
            ...(context.destination ? { destination: context.destination } : {}),
          };
        }
      }
      return outputs();
    };
  },
});
