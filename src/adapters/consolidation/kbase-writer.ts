import { Type } from 'typebox';
import {
  createHttpKnowledgeBase,
  type KnowledgeBase,
  type PageToPublish,
  type PublishedState,
} from '../../consolidation/knowledge-base.js';
import { egressPolicy } from '../../http/egress-policy.js';
import type { JsonRequestOptions } from '../../http/json-request.js';
import { isHttpUrl, publicBaseUrl, sourceLink } from '../../storage/object-links.js';
import { createConfluencePublisher } from '../../wiki/confluence-publisher.js';
import { defineAdapter, MessageSkipped, PermanentFailure, type SettingsProblem } from '../adapter.js';
import { boundSecret, checkSecret, onFirstUse } from '../api-access.js';
import { wikiConnectionFields } from '../wiki/wiki-connection.js';
import { conceptPayloadOf, pageFlowFields } from './knowledge-flow.js';

const ConfluenceTarget = Type.Object(
  {
    kind: Type.Literal('confluence'),
    provider: wikiConnectionFields.provider,
    base_url: wikiConnectionFields.base_url,
    username: wikiConnectionFields.username,
    token_secret: wikiConnectionFields.token_secret,
    space_key: Type.String({ minLength: 1, description: 'the space the pages go to' }),
    parent_page_id: Type.Optional(
      Type.String({ minLength: 1, description: 'the pages are created under this page' }),
    ),
    title_prefix: Type.String({
      default: '',
      description: 'put before every page title (titles are unique per space)',
    }),
  },
  { additionalProperties: false },
);

const HttpTarget = Type.Object(
  {
    kind: Type.Literal('http'),
    url: Type.String({
      pattern: '^https?://',
      description: 'pages are PUT to <url>/<slug> and DELETEd from there',
    }),
    token_secret: Type.Optional(
      Type.String({
        pattern: '^[a-z0-9_]+$',
        description:
          'secret sent as `Authorization: Bearer <secret>`; url must be one of its origins (WEIR_SECRET_<NAME>_ORIGINS)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const kbaseWriter = defineAdapter({
  type: 'kbase_writer',
  group: 'knowledge',
  summary:
    'Publish concept pages to an external knowledge base (Confluence or an HTTP JSON endpoint), idempotently.',
  description:
    'Targets: `confluence` (Cloud REST v2 or Data Center REST v1: the page is created in `space_key`, or updated ' +
    'with the next version number; a 409 version conflict is retried with the version read again; 429 and 503 wait ' +
    'for Retry-After) and `http` (PUT `<url>/<slug>` with `{slug, title, markdown, content_hash, sources, ' +
    'map_version}`, DELETE for removed concepts). Each source has a `url` and a `link` that opens it: its origin when ' +
    'http(s), else the stored object under WEIR_PUBLIC_URL (`<public url>/api/v1/storage/objects/<key>`) for both, so a ' +
    'file origin (`file:///srv/...`, a server path) is never published. Credentials come from a named secret (`WEIR_SECRET_<NAME>`), sent only to its declared origins (`WEIR_SECRET_<NAME>_ORIGINS`). What ' +
    "was published is kept per target in the config's sync state: a page whose slug and content hash were published " +
    "already is not written again (`action: unchanged`, no request). A `removed` concept's page is deleted. Emits " +
    '`{knowledge_base, slug, title, action: created | updated | unchanged | deleted | absent, url, page_id, version, ' +
    'requests}`.',
  config: Type.Object(
    {
      target: Type.Union([ConfluenceTarget, HttpTarget]),
      request_timeout: Type.Number({
        exclusiveMinimum: 0,
        maximum: 600,
        default: 30,
        description: 'seconds per request',
      }),
      max_attempts: Type.Integer({
        minimum: 1,
        maximum: 10,
        default: 5,
        description: 'attempts on 429 and 503',
      }),
      max_retry_after: Type.Number({
        minimum: 0,
        maximum: 3600,
        default: 120,
        description: 'longest Retry-After waited for, seconds',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object(pageFlowFields),
  output: Type.Object({
    knowledge_base: Type.String(),
    slug: Type.String(),
    title: Type.String(),
    action: Type.Union(
      ['created', 'updated', 'unchanged', 'deleted', 'absent'].map((action) => Type.Literal(action)),
    ),
    url: Type.Union([Type.String(), Type.Null()]),
    page_id: Type.Union([Type.String(), Type.Null()]),
    version: Type.Union([Type.Integer(), Type.Null()]),
    requests: Type.Integer(),
  }),
  checkSettings: (config, settings): SettingsProblem[] => {
    const target = config.target;
    if (!target.token_secret) return [];
    const [url, field] = target.kind === 'http' ? [target.url, 'url'] : [target.base_url, 'base_url'];
    return checkSecret(
      settings,
      target.token_secret,
      ['target', 'token_secret'],
      [{ url, field: ['target', field] }],
    );
  },
  create: (config, resources) => {
    const target = config.target;
    // Sources the service stored (no http(s) origin) are linked under its public address.
    const linkBase = publicBaseUrl(resources.settings);
    const knowledgeBase = onFirstUse((): KnowledgeBase => {
      const request: Omit<JsonRequestOptions, 'signal'> = {
        egress: egressPolicy(resources.settings.fetch_allowed_cidrs),
        timeoutMs: Math.round(config.request_timeout * 1000),
        maxAttempts: config.max_attempts,
        maxRetryAfterMs: config.max_retry_after * 1000,
      };
      if (target.kind === 'http') {
        const secret = target.token_secret ? boundSecret(resources.settings, target.token_secret) : undefined;
        return createHttpKnowledgeBase({ url: target.url, token: secret?.valueFor, request });
      }
      const token = boundSecret(resources.settings, target.token_secret).valueFor;
      return createConfluencePublisher(
        {
          baseUrl: target.base_url,
          flavor: target.provider === 'confluence_cloud' ? 'cloud' : 'datacenter',
          auth: target.username
            ? { scheme: 'basic', username: target.username, token }
            : { scheme: 'bearer', token },
          spaceKey: target.space_key,
          parentPageId: target.parent_page_id,
          titlePrefix: target.title_prefix,
        },
        request,
      );
    });

    return async (payload, context) => {
      const message = conceptPayloadOf(payload, 'kbase_writer');
      const base = knowledgeBase();
      const scope = `kbase ${message.knowledge_base} ${base.target}`;
      const slug = message.concept?.slug ?? message.removed?.slug;
      // An empty slug would be a page at the target's root (PUT <url>/) and one sync-state key
      // shared by every such message: refused instead.
      if (!slug) throw new PermanentFailure('kbase_writer: the concept has no slug to publish it under');
      const title = message.concept?.name ?? message.removed?.name ?? slug;
      const known = storedState((await context.syncState.all(scope, [slug])).get(slug), slug);
      const result = (action: string, state: PublishedState | undefined, requests: number) => ({
        payload: {
          knowledge_base: message.knowledge_base,
          slug,
          title,
          action,
          url: state?.url ?? null,
          page_id: state?.page_id ?? null,
          version: state?.version ?? null,
          requests,
        },
      });
      if (message.removed) {
        // Never published by this target (as far as its state says): nothing to take down.
        if (!known) return [result('absent', undefined, 0)];
        const removal = await base.remove(slug, title, known, context.signal);
        await context.syncState.remove(scope, [slug]);
        return [result(removal.removed ? 'deleted' : 'absent', known, removal.requests)];
      }
      if (!message.page || !message.concept)
        throw new MessageSkipped(`concept ${slug} has no page to publish`);
      if (known?.content_hash === message.page.content_hash) return [result('unchanged', known, 0)];
      const page: PageToPublish = {
        slug,
        title,
        markdown: message.page.markdown,
        content_hash: message.page.content_hash,
        sources: (message.passages ?? [])
          .filter(
            (passage, index, all) =>
              all.findIndex((other) => other.source_id === passage.source_id) === index,
          )
          .map((passage) => {
            const link = sourceLink(passage.url, passage.key, linkBase);
            // A file's origin (file:///srv/share/...) names a server path: it is not
            // published; the stored object's http link stands in for it.
            return {
              source_id: passage.source_id,
              title: passage.title,
              url: isHttpUrl(passage.url) ? passage.url : link,
              link,
            };
          }),
        map_version: message.map_version,
      };
      const published = await base.publish(page, known, context.signal);
      const state = { page_id: published.page_id, version: published.version, url: published.url };
      await context.syncState.put(scope, [
        { key: slug, value: { ...state, content_hash: page.content_hash } },
      ]);
      return [result(published.action, state, published.requests)];
    };
  },
});

/**
 * The sync state kept for a published page (JSON from the database), checked field by field: a
 * value of another shape (written by another version, or edited by hand) fails the message with
 * what is wrong rather than being read as a page the target has.
 */
function storedState(value: unknown, slug: string): (PublishedState & { content_hash?: string }) | undefined {
  if (value === undefined || value === null) return undefined;
  const fields = value as Record<string, unknown>;
  const optional = (name: string, type: 'string' | 'number') =>
    fields[name] === undefined || fields[name] === null || typeof fields[name] === type;
  if (
    typeof value !== 'object' ||
    Array.isArray(value) ||
    !optional('page_id', 'string') ||
    !optional('version', 'number') ||
    !optional('url', 'string') ||
    !optional('content_hash', 'string')
  ) {
    throw new PermanentFailure(
      `kbase_writer: the sync state of ${slug} is not a published page (${JSON.stringify(value).slice(0, 200)})`,
    );
  }
  return {
    page_id: (fields.page_id as string | null | undefined) ?? undefined,
    version: (fields.version as number | null | undefined) ?? undefined,
    url: (fields.url as string | null | undefined) ?? undefined,
    content_hash: (fields.content_hash as string | null | undefined) ?? undefined,
  };
}
