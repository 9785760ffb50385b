/**
 * A strict, non-expanding reader for sitemap XML (sitemaps.org 0.9). It streams through
 * htmlparser2 in XML mode and refuses any DOCTYPE or other `<!...>` declaration outright, so
 * internal entities (billion laughs) and external entities (file:// reads, SSRF) never get a
 * chance; only the five predefined entities and character references are decoded. Elements
 * left unclosed, a wrong root or absurd nesting fail with a message naming the problem.
 */
import { Parser } from 'htmlparser2';

export class SitemapError extends Error {
  override name = 'SitemapError';
}

export interface ParsedSitemap {
  kind: 'urlset' | 'sitemapindex';
  locs: string[];
}

const MAX_NESTING = 16;

export function parseSitemapXml(text: string, source: string): ParsedSitemap {
  const stack: string[] = [];
  const locs: string[] = [];
  let kind: ParsedSitemap['kind'] | undefined;
  let loc: string | undefined;
  const fail = (problem: string): never => {
    throw new SitemapError(`${source} is not a usable sitemap: ${problem}`);
  };
  const parser = new Parser(
    {
      onprocessinginstruction(name, data) {
        if (/^!doctype\s+html\s*$/i.test(data)) fail('it is an HTML page, not sitemap XML');
        if (name.startsWith('!')) {
          fail(`it has a ${name.slice(1).toUpperCase()} declaration; DTDs and entities are refused`);
        }
      },
      onopentag(rawName) {
        const name = localName(rawName);
        if (stack.length === 0) {
          if (kind) fail('it has more than one root element');
          if (name !== 'urlset' && name !== 'sitemapindex') {
            fail(`its root element is <${rawName}>, not <urlset> or <sitemapindex>`);
          }
          kind = name as ParsedSitemap['kind'];
        }
        if (stack.length >= MAX_NESTING) fail(`elements nest deeper than ${MAX_NESTING} levels`);
        const parent = stack[stack.length - 1];
        stack.push(name);
        if (name === 'loc' && (parent === 'url' || parent === 'sitemap')) loc = '';
      },
      ontext(text) {
        if (loc !== undefined) loc += text;
        else if (stack.length === 0 && text.trim() !== '') fail('it has text outside the root element');
      },
      onclosetag(rawName, isImplied) {
        if (isImplied) fail(`element <${rawName}> is not closed (truncated or malformed XML)`);
        const name = stack.pop();
        if (name === 'loc' && loc !== undefined) {
          const value = loc.trim();
          if (value) locs.push(value);
          loc = undefined;
        }
      },
    },
    { xmlMode: true, decodeEntities: true, recognizeCDATA: true },
  );
  parser.write(text);
  parser.end();
  if (!kind) fail('it has no root element');
  return { kind: kind as ParsedSitemap['kind'], locs };
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}
