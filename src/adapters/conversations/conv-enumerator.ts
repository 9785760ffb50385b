import path from 'node:path';
import { Type } from 'typebox';
import { conversationFormats } from '../../conversations/model.js';
import { listLocalPackages } from '../../conversations/packages.js';
import { resolveShareRoot } from '../../fileshare/local-share.js';
import { defineAdapter, PermanentFailure } from '../adapter.js';
import { checkShareRoot } from '../fileshare/share-root-check.js';
import { routed, shortHash } from './shared.js';

const formatSchema = Type.Union(
  [Type.Literal('auto'), ...conversationFormats.map((format) => Type.Literal(format))],
  { default: 'auto', description: 'export format; `auto` tells it from the file names and first bytes' },
);

export const PackageDescriptor = Type.Object({
  package_id: Type.String({ description: 'stable id: a hash of where the package was found' }),
  location: Type.Union([Type.Literal('share'), Type.Literal('storage')]),
  root: Type.Optional(Type.String({ description: 'share: the resolved share root' })),
  path: Type.Optional(
    Type.String({ description: 'share: the export file, ZIP or export folder, relative to the root' }),
  ),
  key: Type.Optional(
    Type.String({
      description: 'storage: an object key, or a prefix ending in `/` (a Slack export uploaded as objects)',
    }),
  ),
  format: formatSchema,
  size: Type.Optional(Type.Integer({ minimum: 0, description: 'bytes, when known' })),
});

export const convEnumerator = defineAdapter({
  type: 'conv_enumerator',
  group: 'conversation',
  summary: 'Find conversation exports (packages) on a file share or in storage; one message per package.',
  description:
    'A package is one export: a ChatGPT data export (its ZIP as downloaded, the unzipped folder of `conversations.json` ' +
    'beside `user.json`, `message_feedback.json`, `chat.html`, or `conversations.json` alone), a Slack export (ZIP or ' +
    'folder of channel folders of day files), a Teams file of Graph `chatMessage` resources, or a JSONL file. Source ' +
    '`share`: the export files, ZIPs and export folders directly under `root` (config or payload `root`), which must ' +
    'lie under the `fileshare_roots` setting; a root that is itself a Slack or ChatGPT export folder is one package. ' +
    'Source `storage`: the object `key` (a ZIP too), or every object under `prefix` as one package. An object written by an earlier stage (payload `storage_key`, as fileshare_fetcher emits, which is how ' +
    'SharePoint exports come in) is one package whatever the source. Nothing is read here beyond the listing. Emits ' +
    '`{package_id, location, root?, path?, key?, format, size?}` per package, routed to the step destination.',
  config: Type.Object(
    {
      source: Type.Union([Type.Literal('share'), Type.Literal('storage')], {
        default: 'share',
        description: 'where the packages are: a local share directory, or the object store',
      }),
      root: Type.Optional(Type.String({ minLength: 1, description: 'share: directory holding the exports' })),
      key: Type.Optional(
        Type.String({
          minLength: 1,
          description: 'storage: one object key, or a prefix ending in `/` read as one package',
        }),
      ),
      format: formatSchema,
      max_packages: Type.Integer({
        minimum: 1,
        maximum: 100_000,
        default: 1000,
        description: 'stop after this many',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    root: Type.Optional(Type.String({ description: 'share directory (overrides the config)' })),
    storage_key: Type.Optional(Type.String({ description: 'an object an earlier stage wrote: one package' })),
  }),
  output: PackageDescriptor,
  fanOut: true,
  checkSettings: (config, settings) =>
    config.source === 'share' ? checkShareRoot(config.root, settings) : [],
  create: (config, resources) => async (payload, context) => {
    if (typeof payload.storage_key === 'string' && payload.storage_key !== '') {
      return [routed(context, storagePackage(payload.storage_key, config.format))];
    }
    if (config.source === 'storage') {
      if (!config.key)
        throw new PermanentFailure('source storage needs `key` (an object key or a prefix ending in `/`)');
      return [routed(context, storagePackage(config.key, config.format))];
    }
    const requested = typeof payload.root === 'string' && payload.root ? payload.root : config.root;
    if (!requested)
      throw new PermanentFailure('no share root: set `root` in the step config or the input payload');
    const root = await resolveShareRoot(requested, resources.settings.fileshare_roots);
    const packages = (await listLocalPackages(root)).slice(0, config.max_packages);
    return packages.map((found) =>
      routed(context, {
        package_id: shortHash(`share:${path.join(root, found.path)}`),
        location: 'share',
        root,
        path: found.path,
        format: config.format,
        size: found.size,
      }),
    );
  },
});

/**
 * A package in the object store. Its id leaves out a leading execution id (an earlier
 * stage's output key), so the same export fetched again by a later run keeps its id.
 */
function storagePackage(key: string, format: string): Record<string, unknown> {
  const stable = key.replace(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\//i, '');
  return { package_id: shortHash(`storage:${stable}`), location: 'storage', key, format };
}
