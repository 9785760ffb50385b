/**
 * Issue 30, item 1: every HTTP request the service makes leaves through the one outbound client
 * (src/http/outbound.ts and the src/http/ modules built on it), where the egress policy holds at
 * connect time on every hop and redirects are never followed by undici. This test fails when
 * service code anywhere else under src/ makes a request itself, so the next client cannot
 * quietly bypass the policy.
 *
 * Looked for, outside src/http/ (tests, *.test.ts, are not service code and are skipped):
 * - `fetch(` (global or undici's), `globalThis.fetch`, and any `.fetch(` method call;
 * - any import or require of 'undici';
 * - `http.request`, `https.request`, `http.get`, `https.get`, and `request`/`get` imported from
 *   node:http or node:https;
 * - an egress policy's dispatcher used directly (`x.dispatcher.dispatch(`, `dispatcher:
 *   policy.dispatcher`), around outbound.ts.
 *
 * The exceptions, each one file and one pattern, with why:
 * - src/evaluation/eval-command.ts and src/evaluation/http-retrieve.ts, `fetch(`: `weir eval`
 *   (src/main.ts) is a command-line client of a Weir service, the --url its user gives, run
 *   outside the service; it sends only that user's WEIR_API_KEY to it. The service itself
 *   imports nothing from them but the pure `citedSources`.
 * - src/cli/client.ts, `fetch(`: `weir run --url`, `weir ask` and `weir search` are the same
 *   kind of command-line client of a Weir service at the user's --url (embedded, `weir run`
 *   calls the in-process service through Fastify's inject and makes no request).
 * - src/adapters/web/web-crawler.ts, `route.fetch(`: Playwright's request from Chromium's own
 *   network stack for a top-level navigation, made one hop at a time (`maxRedirects: 0`) after
 *   `client.egress.check(target)` resolved the hop's host and checked every address; robots.txt
 *   and the host's pace are applied to each hop too. Chromium resolves the name again when it
 *   connects, so this is a check just before connecting, not at connect time (docs/security.md).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');

/**
 * Patterns of calls are matched with string literals emptied, so a message such as "no page URL
 * to fetch (3 sitemaps read)" is no finding; the import patterns need the module's name.
 */
const patterns: { name: string; pattern: RegExp; inStrings?: true }[] = [
  { name: 'fetch(', pattern: /(?<![\w.$])fetch\s*\(/ },
  { name: 'globalThis.fetch', pattern: /\bglobalThis\s*\.\s*fetch\b/ },
  { name: 'route.fetch(', pattern: /\.\s*fetch\s*\(/ },
  {
    name: "'undici'",
    pattern: /(?:from|import\s*\(|require\s*\()\s*['"]undici(?:\/[^'"]*)?['"]/,
    inStrings: true,
  },
  { name: 'http(s).request/get', pattern: /\bhttps?\s*\.\s*(?:request|get)\s*\(/ },
  {
    name: 'request/get from node:http(s)',
    pattern: /import\s*\{[^}]*\b(?:request|get)\b[^}]*\}\s*from\s*['"](?:node:)?https?['"]/,
    inStrings: true,
  },
  {
    // Only a dispatcher's own request methods or passing it on: Weir's webhook dispatcher is
    // another thing of the same name.
    name: 'an egress dispatcher',
    pattern:
      /\.\s*dispatcher\s*\.\s*(?:dispatch|request|stream|pipeline|connect|upgrade)\s*\(|\bdispatcher\s*:\s*[\w$]+\s*\.\s*dispatcher\b/,
  },
];

/** Each exception: one file, one pattern name. */
const exceptions: ReadonlySet<string> = new Set([
  'src/evaluation/eval-command.ts fetch(',
  'src/evaluation/http-retrieve.ts fetch(',
  'src/cli/client.ts fetch(',
  'src/adapters/web/web-crawler.ts route.fetch(',
]);

/**
 * The lines of code without comments, so a comment that names `fetch(` is no finding. Line by
 * line (comment lines start with //, /* or *, and a trailing // follows a space): a regular
 * expression over the whole text takes a slash-star inside a string (web-crawler.ts's route
 * glob) for the start of a comment.
 */
function codeLines(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !/^\s*(?:\/\/|\/\*|\*)/.test(line))
    .map((line) => line.replace(/\s\/\/\s.*$/, ''));
}

/** A line with every quoted or template string emptied (`'...'` -> `''`). */
function withoutStringContents(line: string): string {
  return line.replace(
    /'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`/g,
    (quoted) => `${quoted.charAt(0)}${quoted.charAt(0)}`,
  );
}

/** The findings in one file's text: `<file> <pattern>: <line>`. */
function outboundFindings(file: string, text: string): string[] {
  const findings: string[] = [];
  const lines = codeLines(text);
  for (const { name, pattern, inStrings } of patterns) {
    if (exceptions.has(`${file} ${name}`)) continue;
    for (const line of lines) {
      const searched = inStrings ? line : withoutStringContents(line);
      if (pattern.test(searched)) findings.push(`${file} ${name}: ${line.trim()}`);
    }
  }
  return findings;
}

function serviceFiles(directory: string): string[] {
  return readdirSync(path.join(root, directory), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${directory}/${entry.name}`;
    if (entry.isDirectory()) return relative === 'src/http' ? [] : serviceFiles(relative);
    return /\.(?:ts|mts|cts|js|mjs)$/.test(entry.name) && !/\.test\.\w+$/.test(entry.name) ? [relative] : [];
  });
}

describe('outbound requests leave through src/http/ only', () => {
  it('finds no HTTP client outside src/http/ but the documented exceptions', () => {
    const files = serviceFiles('src');
    expect(files.length).toBeGreaterThan(100);
    const findings = files.flatMap((file) =>
      outboundFindings(file, readFileSync(path.join(root, file), 'utf8')),
    );
    expect(findings).toEqual([]);
  });

  it('would catch each kind of bypass (planted violations)', () => {
    const planted = [
      "const answer = await fetch('http://127.0.0.1/');",
      'await globalThis.fetch(url);',
      "import { request } from 'undici';",
      "const { Agent } = await import('undici');",
      "http.get('http://127.0.0.1/', () => {});",
      'https.request(options);',
      "import { get } from 'node:https';",
      'policy.dispatcher.dispatch(options, handler);',
      'await somethingElse(url, { dispatcher: policy.dispatcher });',
      'await route.fetch({ url });',
    ];
    for (const line of planted)
      expect(outboundFindings('src/adapters/planted.ts', line), line).not.toEqual([]);
    // A comment naming fetch( is no finding; an exception holds only for its own file.
    expect(outboundFindings('src/adapters/planted.ts', '// fetch(url) is not used here')).toEqual([]);
    expect(outboundFindings('src/adapters/planted.ts', 'skip(`no page URL to fetch (3 read)`);')).toEqual([]);
    expect(outboundFindings('src/adapters/planted.ts', 'parts.dispatcher.wake();')).toEqual([]);
    expect(outboundFindings('src/adapters/web/web-crawler.ts', 'await route.fetch({ url });')).toEqual([]);
    expect(outboundFindings('src/adapters/web/web-crawler.ts', 'await fetch(url);')).toHaveLength(1);
  });

  it('keeps the exceptions honest: each still names a real use', () => {
    for (const exception of exceptions) {
      const [file, name] = exception.split(' ') as [string, string];
      const pattern = patterns.find((entry) => entry.name === name)?.pattern as RegExp;
      const lines = codeLines(readFileSync(path.join(root, file), 'utf8'));
      expect(
        lines.some((line) => pattern.test(line)),
        exception,
      ).toBe(true);
    }
  });
});
