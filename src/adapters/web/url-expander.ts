import { Type } from 'typebox';
import { type AdapterOutput, defineAdapter } from '../adapter.js';
import { compilePatterns, urlFilter } from './web-options.js';

export const urlExpander = defineAdapter({
  type: 'url_expander',
  group: 'web',
  summary: 'Fan a URL list out: one `{url}` message per URL, to an explicit destination.',
  description:
    'Input `{urls}` (sitemap_parser). Each absolute http(s) URL becomes one message `{url}` routed to the step ' +
    '`destination` (spec 2.3 rule 2), or to the next stage when the step has none. URLs are deduplicated (after ' +
    'dropping the #fragment), filtered by `include`/`exclude` and capped at `max_urls`; entries that are not ' +
    'http(s) URLs are dropped and counted in the output metadata `url_expander.invalid`. Input that is not a list ' +
    'of strings fails the message.',
  config: Type.Object(
    {
      include: Type.Array(Type.String(), {
        default: [],
        description: 'regexes; when given a URL must match one',
      }),
      exclude: Type.Array(Type.String(), {
        default: [],
        description: 'regexes; a URL matching one is dropped',
      }),
      max_urls: Type.Integer({
        minimum: 1,
        maximum: 10_000_000,
        default: 100_000,
        description: 'messages emitted at most per input',
      }),
      dedupe: Type.Boolean({ default: true, description: 'emit each URL once per input' }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({ urls: Type.Array(Type.String()) }),
  output: Type.Object({ url: Type.String() }),
  fanOut: true,
  create: (config) => {
    const accept = urlFilter(
      compilePatterns('include', config.include),
      compilePatterns('exclude', config.exclude),
    );
    return async (payload, context) => {
      const list = payload.urls;
      if (!Array.isArray(list) || list.some((item) => typeof item !== 'string')) {
        throw new Error('input needs `urls`, an array of URL strings (the sitemap_parser payload)');
      }
      const seen = new Set<string>();
      const outputs: AdapterOutput[] = [];
      let invalid = 0;
      for (const item of list as string[]) {
        const url = normalise(item);
        if (!url) {
          invalid++;
          continue;
        }
        if (!accept(url) || (config.dedupe && seen.has(url))) continue;
        seen.add(url);
        outputs.push({
          payload: { url },
          ...(context.destination ? { destination: context.destination } : {}),
        });
        if (outputs.length >= config.max_urls) break;
      }
      if (invalid > 0) for (const output of outputs) output.metadata = { url_expander: { invalid } };
      return outputs;
    };
  },
});

function normalise(text: string): string | undefined {
  try {
    const url = new URL(text.trim());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    url.hash = '';
    return url.href;
  } catch {
    return undefined;
  }
}
