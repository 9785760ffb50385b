import type { BrowserContext, Page, Response } from 'playwright-core';
import { Type } from 'typebox';
import { withBrowserContext } from '../../browser/chromium.js';
import { RobotsDisallowed, type WebClient } from '../../http/web-client.js';
import { type AdapterOutput, defineAdapter, MessageSkipped } from '../adapter.js';
import { assertUsableStatus, publicHeaders } from './page-fetch.js';
import { compilePatterns, fetchConfigFields, requireHttpUrl, webClientFromConfig } from './web-options.js';

export const webCrawler = defineAdapter({
  type: 'web_crawler',
  group: 'web',
  summary: 'JS-rendered fetch in headless Chromium; fans PDF links out to pdf_fetcher.',
  description:
    'Input `{url}`. Loads the page in the Debian Chromium (setting `chromium_path`, one browser per process, a fresh ' +
    'context per message) and waits for network idle (`wait_until`) and, when set, for `wait_for_selector`, within ' +
    '`request_timeout`. Every top-level navigation, redirects included, goes through the same robots.txt check and ' +
    'per-host adaptive rate limit as web_scraper (a 429/503 is waited out and retried); sub-resources are not paced. ' +
    '404/410 and robots-disallowed pages are skipped. Emits the rendered `{url, html, status, headers}` to the next ' +
    'stage, and one `{url}` per PDF link (href ending in .pdf, same host unless `pdf_same_host_only` is false) to the ' +
    'route `pdf_destination`; a URL that is itself a PDF (by .pdf or served as application/pdf) goes there instead of ' +
    'being rendered. Without `pdf_destination` PDF links are only counted in metadata `web_crawler.pdf_links`. ' +
    "With `follow_links`, the rendered page's links on the same host (`include`/`exclude` patterns on the URL) are sent " +
    'as `{url, depth}` to `links_destination` (default this route) up to `max_depth` links away from the first page ' +
    'and `max_pages` pages per execution; each URL is claimed once per execution (across messages and instances), ' +
    'so no page is fetched twice, and robots.txt and the rate limit apply to every one.',
  config: Type.Object(
    {
      pdf_destination: Type.Optional(
        Type.String({
          pattern: '^[a-z0-9][a-z0-9_-]{0,63}$',
          description: 'route id receiving `{url}` per PDF link',
        }),
      ),
      pdf_same_host_only: Type.Boolean({ default: true, description: 'only fan out PDFs on the page host' }),
      wait_until: Type.Union(
        [Type.Literal('networkidle'), Type.Literal('load'), Type.Literal('domcontentloaded')],
        {
          default: 'networkidle',
          description: 'page readiness to wait for',
        },
      ),
      wait_for_selector: Type.Optional(
        Type.String({ minLength: 1, description: 'CSS selector that must appear before the HTML is taken' }),
      ),
      follow_links: Type.Boolean({
        default: false,
        description: 'crawl the site: send same-host links on as new pages',
      }),
      max_depth: Type.Integer({
        minimum: 1,
        maximum: 50,
        default: 3,
        description: 'links away from the first page',
      }),
      max_pages: Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        default: 1000,
        description: 'pages per execution (the first ones included)',
      }),
      include: Type.Array(Type.String({ minLength: 1 }), {
        default: [],
        description: 'regular expressions; when set, only link URLs matching one are followed',
      }),
      exclude: Type.Array(Type.String({ minLength: 1 }), {
        default: [],
        description: 'regular expressions; link URLs matching one are not followed',
      }),
      links_destination: Type.Optional(
        Type.String({
          pattern: '^[a-z0-9][a-z0-9_-]{0,63}$',
          description: 'route id receiving `{url, depth}` per followed link; default this route',
        }),
      ),
      ...fetchConfigFields({ rateLimit: 1, timeoutSeconds: 30 }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    url: Type.String(),
    depth: Type.Optional(
      Type.Integer({ minimum: 0, description: 'links away from the first page (follow_links)' }),
    ),
  }),
  output: Type.Object({
    url: Type.String(),
    html: Type.String(),
    status: Type.Integer(),
    headers: Type.Record(Type.String(), Type.String()),
  }),
  fanOut: true,
  create: (config, resources) => {
    // The HTTP client holds the robots cache and the host limiters; Chromium does the fetching.
    const client = webClientFromConfig(config, 1024 * 1024, 'web_crawler', resources.settings);
    const timeoutMs = Math.round(config.request_timeout * 1000);
    const pdfOutput = (url: string): AdapterOutput | undefined =>
      config.pdf_destination ? { payload: { url }, destination: config.pdf_destination } : undefined;
    const include = compilePatterns('include', config.include);
    const exclude = compilePatterns('exclude', config.exclude);
    const wanted = (url: string) =>
      (include.length === 0 || include.some((pattern) => pattern.test(url))) &&
      !exclude.some((pattern) => pattern.test(url));

    return async (payload, context) => {
      const url = requireHttpUrl(payload);
      const depth = typeof payload.depth === 'number' && payload.depth > 0 ? payload.depth : 0;
      // A first page is claimed too, so a link back to it is not followed.
      if (config.follow_links && depth === 0) await context.claims.claim(CRAWL_SCOPE, [normalized(url)]);
      if (isPdfPath(url)) {
        const output = pdfOutput(url);
        if (!output) throw new Error(`${url} is a PDF and the step has no pdf_destination`);
        return [output];
      }
      return withBrowserContext(
        resources.settings.chromium_path,
        async (browserContext) => {
          const refusal = await guardRequests(
            browserContext,
            client,
            context.signal,
            timeoutMs,
            config.max_redirects,
          );
          const page = await browserContext.newPage();
          page.setDefaultTimeout(timeoutMs);
          // The last top-level answer, seen even when Chromium turns it into a download (PDFs).
          let lastContentType = '';
          page.on('response', (answer) => {
            if (answer.request().isNavigationRequest() && answer.frame() === page.mainFrame()) {
              lastContentType = answer.headers()['content-type'] ?? '';
            }
          });
          const response = await navigate(page, url, refusal, () => lastContentType, {
            client,
            timeoutMs,
            waitUntil: config.wait_until,
            maxRetries: config.max_retries,
            maxRetryAfterMs: config.max_retry_after * 1000,
          });
          if (response === 'pdf') {
            const output = pdfOutput(url);
            if (!output)
              throw new Error(`${url} is served as application/pdf and the step has no pdf_destination`);
            return [output];
          }
          if (config.wait_for_selector) {
            await page.waitForSelector(config.wait_for_selector, { timeout: timeoutMs }).catch(() => {
              throw new Error(
                `${url}: selector ${JSON.stringify(config.wait_for_selector)} did not appear within ${timeoutMs} ms`,
              );
            });
          }
          const html = await page.content();
          const finalUrl = page.url();
          const host = new URL(finalUrl).host;
          const links = await linksOf(page);
          const pdfLinks = links
            .filter((link) => isPdfPath(link.href) && (!config.pdf_same_host_only || link.host === host))
            .map((link) => link.href);
          const outputs: AdapterOutput[] = [
            {
              payload: {
                url: finalUrl,
                html,
                status: response.status(),
                headers: publicHeaders(await response.allHeaders()),
              },
              metadata: {
                web_crawler: { pdf_links: pdfLinks.length },
                ...(finalUrl !== url ? { requested_url: url } : {}),
              },
            },
          ];
          for (const link of pdfLinks) {
            const output = pdfOutput(link);
            if (output) outputs.push(output);
          }
          // Where a redirect ended counts as fetched too.
          if (config.follow_links && finalUrl !== url)
            await context.claims.claim(CRAWL_SCOPE, [normalized(finalUrl)]);
          if (config.follow_links && depth < config.max_depth) {
            // Pages on the same host; PDF links fanned out above.
            const follow = links
              .filter((link) => link.host === host && !isPdfPath(link.href))
              .map((link) => link.href)
              .filter(wanted);
            const claimed = await context.claims.claim(CRAWL_SCOPE, follow, config.max_pages);
            const destination = config.links_destination ?? context.routeId;
            for (const link of follow)
              if (claimed.has(link)) outputs.push({ payload: { url: link, depth: depth + 1 }, destination });
          }
          return outputs;
        },
        { userAgent: client.userAgent },
      );
    };
  },
});

/**
 * Routes the context's requests through Weir's policies: every request and WebSocket passes the
 * egress policy, and a top-level navigation walks its redirects here, each hop checked against
 * robots.txt and paced by the host limiter. Returns the reason the last navigation was refused
 * (`robots:` first when robots.txt refused it).
 */
async function guardRequests(
  browserContext: BrowserContext,
  client: WebClient,
  signal: AbortSignal,
  timeoutMs: number,
  maxRedirects: number,
): Promise<() => string | undefined> {
  let refusal: string | undefined;
  await browserContext.route('**/*', async (route, request) => {
    if (!request.isNavigationRequest() || request.frame().parentFrame()) {
      // Sub-resources and frames (the page's scripts included) pass the egress policy too.
      const refused = await client.egress.check(new URL(request.url()));
      return refused ? route.abort('blockedbyclient') : route.continue();
    }
    try {
      // Chromium follows redirects without showing the hops to this handler, so the
      // chain is walked here, each hop checked against robots.txt and paced. A chain
      // ending elsewhere is answered with one redirect to its end, which Chromium then
      // loads itself (that final page is fetched twice).
      let target = new URL(request.url());
      for (let hop = 0; ; hop++) {
        // Every hop passes the egress policy before Chromium's network stack connects.
        const refused = await client.egress.check(target);
        if (refused) throw new Error(refused);
        await client.checkRobots(target, signal);
        await client.limiters.acquire(target.host, signal);
        const answer = await route.fetch({ url: target.href, maxRedirects: 0, timeout: timeoutMs });
        const location = answer.headers().location;
        if (answer.status() < 300 || answer.status() >= 400 || !location) {
          if (target.href === request.url()) return await route.fulfill({ response: answer });
          return await route.fulfill({ status: 302, headers: { location: target.href } });
        }
        if (hop >= maxRedirects) throw new Error(`${request.url()}: more than ${maxRedirects} redirects`);
        target = new URL(location, target);
      }
    } catch (error) {
      refusal = (error as Error).message;
      if (error instanceof RobotsDisallowed) refusal = `robots:${refusal}`;
      return route.abort('blockedbyclient');
    }
  });
  await browserContext.routeWebSocket(/.*/, async (socket) => {
    const refused = await client.egress.check(new URL(socket.url()));
    if (refused) await socket.close({ code: 1008, reason: 'refused by the egress policy' });
    else socket.connectToServer();
  });
  return () => refusal;
}

interface NavigationOptions {
  client: WebClient;
  timeoutMs: number;
  waitUntil: NonNullable<Parameters<Page['goto']>[1]>['waitUntil'];
  maxRetries: number;
  maxRetryAfterMs: number;
}

/** Goes to the page, retrying 429/503 after the limiter's wait; 'pdf' when the answer is a PDF. */
async function navigate(
  page: Page,
  target: string,
  refused: () => string | undefined,
  contentType: () => string,
  options: NavigationOptions,
): Promise<Response | 'pdf'> {
  const { client, timeoutMs } = options;
  for (let attempt = 0; ; attempt++) {
    let response: Response | null;
    try {
      response = await page.goto(target, { waitUntil: options.waitUntil, timeout: timeoutMs });
    } catch (error) {
      const reason = refused();
      if (reason?.startsWith('robots:')) throw new MessageSkipped(reason.slice('robots:'.length));
      if (reason) throw new Error(reason);
      const message = (error as Error).message.split('\n')[0] ?? '';
      // Chromium hands a PDF to its download machinery, which aborts the navigation.
      if (/application\/pdf/i.test(contentType())) return 'pdf';
      throw new Error(`${target}: ${message}`);
    }
    if (!response) throw new Error(`${target}: the browser got no response`);
    const status = response.status();
    const host = new URL(response.url()).host;
    const delay = client.limiters.report(host, status, await response.headerValue('retry-after'));
    client.limiters.quota(host, await response.allHeaders(), options.maxRetryAfterMs);
    if (
      (status === 429 || status >= 500) &&
      attempt < options.maxRetries &&
      delay <= options.maxRetryAfterMs
    ) {
      continue; // the next navigation waits in the limiter
    }
    assertUsableStatus(response.url(), status);
    if (/application\/pdf/i.test((await response.headerValue('content-type')) ?? '')) return 'pdf';
    return response;
  }
}

/** The claims scope of the URLs a crawl has taken. */
const CRAWL_SCOPE = 'web_crawler urls';

/** A URL as claimed: no fragment. */
function normalized(url: string): string {
  const parsed = new URL(url);
  parsed.hash = '';
  return parsed.href;
}

/** The page's http(s) links on its own host, without fragments, PDFs left out (they fan out). */
/** The page's http(s) links, without fragments, each once. */
async function linksOf(page: Page): Promise<URL[]> {
  const hrefs = await page.$$eval('a[href]', (anchors) =>
    anchors.map((anchor) => (anchor as unknown as { href: string }).href),
  );
  const links = new Map<string, URL>();
  for (const href of hrefs) {
    try {
      const url = new URL(href);
      url.hash = '';
      if (url.protocol === 'http:' || url.protocol === 'https:') links.set(url.href, url);
    } catch {
      // not a URL
    }
  }
  return [...links.values()];
}

function isPdfPath(url: string): boolean {
  return /\.pdf$/i.test(new URL(url).pathname);
}
