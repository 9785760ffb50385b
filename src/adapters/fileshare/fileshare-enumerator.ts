import path from 'node:path';
import { Type } from 'typebox';
import { listShareEntries, listShareFiles, resolveShareRoot } from '../../fileshare/local-share.js';
import type { SharePointClient } from '../../fileshare/sharepoint.js';
import {
  type AdapterContext,
  type AdapterOutput,
  type AdapterResources,
  defineAdapter,
  PermanentFailure,
  skipWhenEmpty,
} from '../adapter.js';
import { onFirstUse } from '../api-access.js';
import { checkShareRoot } from './share-root-check.js';
import {
  checkSharePointSecret,
  driveScope,
  type SharePointConnection,
  sharepointClient,
  sharepointConnection,
} from './sharepoint-connection.js';

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
    'routed to the step destination (fan-out). Provider `sharepoint` (Microsoft Graph, settings under `sharepoint`): ' +
    'the document libraries of the sites named by `site_ids` or found by `site_search`, read through ' +
    '`/drives/{id}/root/delta`; the delta link of a completed run is where the next run starts, so it lists only ' +
    'files added or changed since, and files the delta reports deleted leave the knowledge index. Emits ' +
    '`{provider, site_id, site_name, drive_id, drive_name, item_id, path, name, size, modified_at, web_url, etag, ' +
    'previous_etag}` per file.',
  config: Type.Object(
    {
      provider: Type.Union([Type.Literal('local'), Type.Literal('sharepoint')], {
        default: 'local',
        description:
          'where the files are: `local` (a directory) or `sharepoint` (document libraries through Microsoft Graph)',
      }),
      sharepoint: Type.Optional(sharepointConnection),
      root: Type.Optional(
        Type.String({ minLength: 1, description: 'directory to list; the payload `root` wins' }),
      ),
      extensions: Type.Array(Type.String({ pattern: '^\\.[A-Za-z0-9]+$' }), {
        default: documentExtensions,
        description: 'file extensions to list (with the dot); empty lists every file',
      }),
      paths: Type.Array(Type.String({ minLength: 1, pattern: '^(?!/)(?!.*(^|/)\\.\\.(/|$)).*$' }), {
        default: [],
        description:
          'local: files or directories under the root to list, relative to it (`[README.md, docs]`), each checked against fileshare_roots in place of the root; empty lists the whole root',
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
    provider: Type.Union([Type.Literal('local'), Type.Literal('sharepoint')]),
    root: Type.Optional(Type.String({ description: 'local: the resolved share root' })),
    drive_id: Type.Optional(Type.String({ description: 'sharepoint: the document library' })),
    item_id: Type.Optional(Type.String({ description: 'sharepoint: the drive item' })),
    web_url: Type.Optional(Type.String({ description: 'sharepoint: the file in the browser' })),
    etag: Type.Optional(Type.String()),
    previous_etag: Type.Optional(
      Type.String({ description: 'sharepoint: the eTag fetched by the last completed run' }),
    ),
    path: Type.String({ description: 'file path relative to the root, `/`-separated' }),
    name: Type.String(),
    size: Type.Integer({ minimum: 0 }),
    modified_at: Type.String({ format: 'date-time' }),
  }),
  fanOut: true,
  checkSettings: (config, settings) =>
    config.provider === 'sharepoint'
      ? checkSharePointSecret(config.sharepoint, settings)
      : checkShareRoot(config.root, settings, config.paths),
  create: (config, resources) => {
    const extensions = config.extensions.map((extension) => extension.toLowerCase());
    const graph = onFirstUse((connection: SharePointConnection) =>
      sharepointClient(connection, resources.settings, 64 * 1024 * 1024, 'fileshare_enumerator'),
    );
    return async (payload, context) => {
      if (config.provider === 'sharepoint') {
        if (!config.sharepoint)
          throw new PermanentFailure('provider sharepoint needs the `sharepoint` settings');
        return skipWhenEmpty(
          sharepointFiles(
            config.sharepoint,
            graph(config.sharepoint),
            extensions,
            config.max_files,
            resources,
            context,
          ),
          () =>
            `no file${filesOf(extensions)} was added or changed in the SharePoint drives since the last run`,
        );
      }
      const requested = typeof payload.root === 'string' && payload.root ? payload.root : config.root;
      if (!requested)
        throw new PermanentFailure('no share root: set `root` in the step config or the input payload');
      const listing = {
        extensions,
        recursive: config.recursive,
        maxFiles: config.max_files,
        signal: context.signal,
      };
      const allowed = resources.settings.fileshare_roots;
      // With `paths`, the root itself need not be allowed: only what is listed under it is read.
      const root =
        config.paths.length > 0
          ? path.resolve(requested)
          : await resolveShareRoot(requested, resources.settings.fileshare_roots);
      const files =
        config.paths.length > 0
          ? listShareEntries(root, config.paths, allowed, listing)
          : listShareFiles(root, listing);
      async function* outputs(): AsyncGenerator<AdapterOutput> {
        for await (const file of files) {
          yield {
            payload: { provider: 'local', root, ...file },
            ...(context.destination ? { destination: context.destination } : {}),
          };
        }
      }
      return skipWhenEmpty(
        outputs(),
        () =>
          `${root} holds no files${filesOf(extensions)}${config.recursive ? '' : ' at its top level (recursive: false)'}`,
      );
    };
  },
});

/** ` with extension .pdf, .docx` when the step filters by extension. */
function filesOf(extensions: readonly string[]): string {
  return extensions.length === 0 ? '' : ` with extension ${extensions.join(', ')}`;
}

/**
 * The files of every drive added or changed since the last completed run (all of them the
 * first time), and what the delta says was deleted removed from the knowledge index.
 */
async function* sharepointFiles(
  connection: SharePointConnection,
  client: SharePointClient,
  extensions: readonly string[],
  maxFiles: number,
  resources: AdapterResources,
  context: AdapterContext,
): AsyncGenerator<AdapterOutput> {
  const siteOptions = { siteSearch: connection.site_search, siteIds: connection.site_ids };
  if (connection.site_search === undefined && connection.site_ids.length === 0)
    throw new PermanentFailure('sharepoint needs `site_ids` or `site_search`');
  const wanted = new Set(connection.drives);
  const drives = (await client.drives(siteOptions, context.signal)).filter(
    (drive) => wanted.size === 0 || wanted.has(drive.drive_name),
  );
  const route = context.destination ? { destination: context.destination } : {};
  let count = 0;
  for (const drive of drives) {
    const scope = driveScope(connection, drive.drive_id);
    const settled = await context.syncState.settled(scope);
    const deltaLink = settled.get('delta')?.link;
    const changes = await client.changes(
      drive.drive_id,
      typeof deltaLink === 'string' ? deltaLink : undefined,
      context.signal,
    );
    const known = await context.syncState.all(scope);
    const gone = changes.deleted.filter((itemId) => known.has(`item ${itemId}`));
    if (gone.length > 0) {
      await resources.knowledge.removeDocuments(
        gone.map((itemId) => String(known.get(`item ${itemId}`)?.web_url ?? '')).filter(Boolean),
      );
      await context.syncState.remove(
        scope,
        gone.map((itemId) => `item ${itemId}`),
      );
    }
    const files = changes.files.filter(
      (file) =>
        extensions.length === 0 ||
        extensions.some((extension) => file.name.toLowerCase().endsWith(extension)),
    );
    const state: { key: string; value: Record<string, unknown> }[] = [];
    for (const file of files) {
      if (count++ >= maxFiles) break;
      const previous = settled.get(`item ${file.item_id}`)?.etag;
      state.push({ key: `item ${file.item_id}`, value: { web_url: file.web_url, etag: file.etag } });
      yield {
        payload: {
          provider: 'sharepoint',
          site_id: drive.site_id,
          site_name: drive.site_name,
          drive_id: drive.drive_id,
          drive_name: drive.drive_name,
          ...file,
          ...(typeof previous === 'string' ? { previous_etag: previous } : {}),
        },
        ...route,
      };
    }
    // Only a drive listed in full moves its delta link on.
    if (count <= maxFiles) state.push({ key: 'delta', value: { link: changes.deltaLink } });
    await context.syncState.put(scope, state);
  }
}
