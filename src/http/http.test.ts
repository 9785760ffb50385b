import { describe, expect, it } from 'vitest';
import { decodeBody, looksBinary } from './charset.js';
import { createHostLimiters, httpHostStates, parseReset, parseRetryAfter } from './rate-limiter.js';
import { matchingRule, parseRobots, productToken } from './robots.js';

describe('robots.txt', () => {
  const robots = parseRobots(`# comment
User-agent: *
Disallow: /private/
Allow: /private/public-note.html
Disallow: /*.cgi$

User-agent: weir
User-agent: other
Disallow: /only-for-others/

Sitemap: https://example.test/sitemap.xml
`);

  it('collects groups and sitemap lines', () => {
    expect(robots.sitemaps).toEqual(['https://example.test/sitemap.xml']);
    expect(robots.groups.map((group) => group.agents)).toEqual([['*'], ['weir', 'other']]);
  });

  it('uses the most specific rule of the group naming the agent, else the * group', () => {
    expect(matchingRule(robots, 'curl', '/private/x.html')?.pattern).toBe('/private/');
    expect(matchingRule(robots, 'curl', '/private/public-note.html')).toBeUndefined();
    expect(matchingRule(robots, 'curl', '/run.cgi')?.pattern).toBe('/*.cgi$');
    expect(matchingRule(robots, 'curl', '/run.cgi?x=1')).toBeUndefined();
    // weir has its own group, so the * rules do not apply to it.
    expect(matchingRule(robots, productToken('Weir/0.1 (+x)'), '/private/x.html')).toBeUndefined();
    expect(matchingRule(robots, 'weir', '/only-for-others/a')?.pattern).toBe('/only-for-others/');
  });
});

describe('adaptive host limiter', () => {
  it('paces requests, backs off on 429 honouring Retry-After, and recovers while healthy', async () => {
    let clock = 1_000_000;
    const limiters = createHostLimiters({
      requestsPerSecond: 10,
      recoverAfter: 2,
      label: 'test',
      now: () => clock,
    });
    await limiters.acquire('a.test');
    expect(limiters.report('a.test', 429, '3')).toBe(3000);
    const [state] = limiters.states();
    expect(state).toMatchObject({ host: 'a.test', base_rate: 10, current_rate: 5, throttled: 1 });
    expect(state?.blocked_until).toBe(new Date(clock + 3000).toISOString());
    // An HTTP date works too, and a 503 without Retry-After uses the limiter's own pause.
    expect(limiters.report('a.test', 503, new Date(clock + 10_000).toUTCString())).toBeGreaterThan(9000);
    expect(limiters.report('b.test', 503, null)).toBe(200); // 1000 ms at the halved rate of 5/s
    clock += 20_000;
    for (let index = 0; index < 4; index++) limiters.report('a.test', 200);
    expect(limiters.states()[0]?.current_rate).toBeCloseTo(5.625);
    expect(httpHostStates().some((entry) => entry.limiter === 'test' && entry.host === 'b.test')).toBe(true);
  });

  it('queues concurrent callers one slot apart', async () => {
    const limiters = createHostLimiters({ requestsPerSecond: 20 });
    const started = Date.now();
    await Promise.all([0, 1, 2, 3].map(() => limiters.acquire('c.test')));
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('waits for the reset of an exhausted quota and slows down near the limit, before any 429', () => {
    let clock = 1_700_000_000_000;
    const limiters = createHostLimiters({ requestsPerSecond: 8, label: 'quota', now: () => clock });
    limiters.quota('wiki.test', {
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': new Date(clock + 4000).toISOString(),
    });
    expect(limiters.states()[0]?.blocked_until).toBe(new Date(clock + 4000).toISOString());
    // Capped at the longest wait the caller accepts.
    limiters.quota('graph.test', { 'ratelimit-remaining': '0', 'ratelimit-reset': '600' }, 30_000);
    expect(limiters.states()[1]?.blocked_until).toBe(new Date(clock + 30_000).toISOString());
    limiters.quota('near.test', { 'x-ratelimit-nearlimit': 'true' });
    expect(limiters.states()[2]?.current_rate).toBe(6);
    // Plenty left: nothing changes.
    limiters.quota('calm.test', { 'x-ratelimit-remaining': '950', 'x-ratelimit-reset': '60' });
    expect(limiters.states()[3]).toMatchObject({ current_rate: 8, blocked_until: null });
    clock += 1;
    expect(parseReset('30', clock)).toBe(30_000);
    expect(parseReset(String(Math.floor(clock / 1000) + 10), clock)).toBeGreaterThan(8000);
    expect(parseReset('tomorrow', clock)).toBeUndefined();
  });

  it('reads Retry-After seconds and dates', () => {
    expect(parseRetryAfter('120', 0)).toBe(120_000);
    expect(
      parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:00 GMT')),
    ).toBe(60_000);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
  });
});

describe('charset decoding', () => {
  const cp1252 = Buffer.from([0x93, 0x43, 0x61, 0x66, 0xe9, 0x94, 0x20, 0x80]);

  it('prefers the Content-Type charset, then meta, then the BOM', () => {
    expect(decodeBody(cp1252, 'text/html; charset=windows-1252').text).toBe('\u201cCaf\u00e9\u201d \u20ac');
    const meta = Buffer.concat([Buffer.from('<meta charset="iso-8859-1"><p>'), Buffer.from([0xe5])]);
    expect(decodeBody(meta, 'text/html')).toMatchObject({
      text: '<meta charset="iso-8859-1"><p>\u00e5',
      charset: 'windows-1252',
    });
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('\u00e6\u00f8\u00e5')]);
    expect(decodeBody(bom, undefined).text).toBe('\u00e6\u00f8\u00e5');
  });

  it('fails clearly on an unknown charset and spots binary bodies', () => {
    expect(() => decodeBody(Buffer.from('x'), 'text/html; charset=klingon')).toThrow(/not a known encoding/);
    expect(looksBinary(Buffer.from([0x3c, 0x00, 0x01]))).toBe(true);
    expect(looksBinary(Buffer.from('<html></html>'))).toBe(false);
  });
});
