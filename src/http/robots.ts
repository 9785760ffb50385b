/**
 * robots.txt (RFC 9309): groups by user-agent, Allow/Disallow with `*` and `$`, the longest
 * matching rule wins and Allow wins a tie; `Sitemap:` lines are collected for sitemap_parser.
 */

export interface RobotsRule {
  allow: boolean;
  pattern: string;
}

export interface Robots {
  groups: Array<{ agents: string[]; rules: RobotsRule[] }>;
  sitemaps: string[];
  /**
   * Set when robots.txt could not be read (network error, 5xx): RFC 9309 2.3.1.4 then means
   * "disallow everything", reported with this reason rather than as a Disallow rule.
   */
  unreachable?: string;
}

export const allowAll: Robots = { groups: [], sitemaps: [] };

export function parseRobots(text: string): Robots {
  const robots: Robots = { groups: [], sitemaps: [] };
  let current: Robots['groups'][number] | undefined;
  let lastWasAgent = false;
  for (const rawLine of text.split(/\r\n|\r|\n/)) {
    const line = rawLine.replace(/#.*$/, '').trim();
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const field = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (field === 'user-agent') {
      // Consecutive user-agent lines share one group.
      if (!current || !lastWasAgent) {
        current = { agents: [], rules: [] };
        robots.groups.push(current);
      }
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (field === 'sitemap') {
      if (value) robots.sitemaps.push(value);
    } else if ((field === 'allow' || field === 'disallow') && current) {
      // An empty Disallow allows everything: no rule needed.
      if (value) current.rules.push({ allow: field === 'allow', pattern: value });
    }
  }
  return robots;
}

/** The product token of a User-Agent ("Weir/0.1 (+https://...)" -> "weir"). */
export function productToken(userAgent: string): string {
  return (/^[A-Za-z_-]+/.exec(userAgent)?.[0] ?? userAgent).toLowerCase();
}

/** The rule deciding `pathAndQuery` for `agent`, or undefined when none applies (allowed). */
export function matchingRule(robots: Robots, agent: string, pathAndQuery: string): RobotsRule | undefined {
  const token = agent.toLowerCase();
  const own = robots.groups.filter((group) =>
    group.agents.some((name) => name !== '*' && token.includes(name)),
  );
  const groups = own.length > 0 ? own : robots.groups.filter((group) => group.agents.includes('*'));
  let best: RobotsRule | undefined;
  for (const rule of groups.flatMap((group) => group.rules)) {
    if (!patternMatches(rule.pattern, pathAndQuery)) continue;
    if (
      !best ||
      rule.pattern.length > best.pattern.length ||
      (rule.pattern.length === best.pattern.length && rule.allow)
    ) {
      best = rule;
    }
  }
  return best?.allow ? undefined : best;
}

function patternMatches(pattern: string, target: string): boolean {
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const source = body
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  const expression = new RegExp(`^${source}${anchored ? '$' : ''}`);
  // Paths are compared both as sent and percent-decoded, as robots files spell them either way.
  return expression.test(target) || expression.test(decodeSafely(target));
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
