/**
 * Validation of every step that sends a named secret: E215 when a URL it sends the secret (or a
 * token bought with it) to is not one of the secret's declared origins, with the remediation
 * naming the setting; W507 when the secret may go anywhere; clean when the origins match.
 */
import { describe, expect, it } from 'vitest';
import { validateConfigYaml } from '../engine/config/validate-config.js';
import { loadSettings } from '../settings.js';
import { createBuiltinRegistry } from './builtin.js';

const registry = createBuiltinRegistry();
const settings = loadSettings({
  WEIR_SECRET_WIKI: 'w',
  WEIR_SECRET_WIKI_ORIGINS: 'https://acme.atlassian.net',
  WEIR_SECRET_GRAPH: 'g',
  WEIR_SECRET_GRAPH_ORIGINS: 'https://login.microsoftonline.com,https://graph.microsoft.com',
  WEIR_SECRET_KBASE: 'k',
  WEIR_SECRET_KBASE_ORIGINS: 'https://kb.acme.example',
  WEIR_SECRET_BARE: 'b',
  WEIR_SECRET_LOOSE: 'l',
  WEIR_SECRET_LOOSE_ORIGINS: '*',
});

/** The secret findings of a one-step config: `code path: message | remediation`. */
function findings(type: string, config: string): string[] {
  const text = `routes:\n  - id: a\n    adapters:\n      - type: ${type}\n        config: ${config}\n`;
  return validateConfigYaml(text, registry, settings)
    .findings.filter(
      (finding) => finding.code === 'E214' || finding.code === 'E215' || finding.code === 'W507',
    )
    .map((finding) => `${finding.code} ${finding.path}: ${finding.message} | ${finding.remediation}`);
}

const at = 'routes[0].adapters[0].config';

describe.each([
  'wiki_space_crawler',
  'wiki_page_fetcher',
  'wiki_attachment_fetcher',
])('%s: the token goes to base_url only if the secret declares its origin', (type) => {
  const wiki = (baseUrl: string, secret = 'wiki') =>
    findings(type, `{ base_url: "${baseUrl}", username: x, token_secret: ${secret} }`);

  it('is clean for a declared origin (default port and /wiki path included)', () => {
    expect(wiki('https://acme.atlassian.net')).toEqual([]);
    expect(wiki('https://ACME.atlassian.net:443/wiki')).toEqual([]);
  });

  it('refuses another origin (E215), naming secret and origin', () => {
    expect(wiki('http://attacker.example:8080/wiki')).toEqual([
      `E215 ${at}.base_url: secret wiki may not be sent to http://attacker.example:8080: its declared origins are https://acme.atlassian.net (WEIR_SECRET_WIKI_ORIGINS) | Point base_url at a declared origin, or add http://attacker.example:8080 to WEIR_SECRET_WIKI_ORIGINS and restart.`,
    ]);
    // Same host, another scheme or port: another origin.
    expect(wiki('http://acme.atlassian.net')).toHaveLength(1);
    expect(wiki('https://acme.atlassian.net:8443')).toHaveLength(1);
  });

  it('sends a secret without origins nowhere, and says which setting to add', () => {
    expect(wiki('https://acme.atlassian.net', 'bare')).toEqual([
      `E215 ${at}.base_url: secret bare has no declared origins, so it is not sent to https://acme.atlassian.net (nor anywhere): set WEIR_SECRET_BARE_ORIGINS | Set WEIR_SECRET_BARE_ORIGINS=https://acme.atlassian.net (the origins this config uses) and restart.`,
    ]);
  });

  it('warns (W507) about a secret that may go anywhere', () => {
    expect(wiki('http://anywhere.example', 'loose')).toEqual([
      expect.stringMatching(
        /^W507 routes\[0\]\.adapters\[0\]\.config\.token_secret: secret loose may be sent to any origin \(WEIR_SECRET_LOOSE_ORIGINS=\*\).* \| For development only\. Set WEIR_SECRET_LOOSE_ORIGINS=http:\/\/anywhere\.example/,
      ),
    ]);
  });

  it('keeps E214 for a secret that is not set', () => {
    expect(wiki('https://acme.atlassian.net', 'unset')).toEqual([
      expect.stringMatching(/^E214 .*token_secret: secret unset is not set/),
    ]);
  });
});

describe.each([
  'fileshare_enumerator',
  'fileshare_fetcher',
])('%s: the client secret and its token go to the token URL and graph_url only if both are declared', (type) => {
  const sharepoint = (connection: string, secret = 'graph') =>
    findings(
      type,
      `{ ${type === 'fileshare_enumerator' ? 'provider: sharepoint, ' : ''}sharepoint: { client_id: c, client_secret_secret: ${secret}, ${connection} } }`,
    );

  it('is clean with the tenant and Graph defaults declared', () => {
    expect(sharepoint('tenant_id: contoso.onmicrosoft.com')).toEqual([]);
  });

  it('refuses a token URL and a Graph URL elsewhere, each its own E215', () => {
    expect(
      sharepoint('token_url: "http://attacker.example/token", graph_url: "http://attacker.example:81/v1.0"'),
    ).toEqual([
      expect.stringMatching(
        /^E215 routes\[0\]\.adapters\[0\]\.config\.sharepoint\.token_url: secret graph may not be sent to http:\/\/attacker\.example:/,
      ),
      expect.stringMatching(
        /^E215 routes\[0\]\.adapters\[0\]\.config\.sharepoint\.graph_url: secret graph may not be sent to http:\/\/attacker\.example:81:/,
      ),
    ]);
  });

  it('names both origins in the remediation for a secret without origins', () => {
    const found = sharepoint('tenant_id: contoso.onmicrosoft.com', 'bare').sort();
    expect(found).toEqual([
      expect.stringMatching(/^E215 .*sharepoint\.graph_url: secret bare has no declared origins/),
      expect.stringMatching(/^E215 .*sharepoint\.tenant_id: secret bare has no declared origins/),
    ]);
    for (const finding of found)
      expect(finding).toContain(
        'Set WEIR_SECRET_BARE_ORIGINS=https://login.microsoftonline.com,https://graph.microsoft.com (the origins this config uses)',
      );
  });
});

describe('kbase_writer: the token goes to the target only if the secret declares its origin', () => {
  const kbase = (target: string) => findings('kbase_writer', `{ target: ${target} }`);

  it('checks the http target url', () => {
    expect(kbase('{ kind: http, url: "https://kb.acme.example/pages", token_secret: kbase }')).toEqual([]);
    expect(kbase('{ kind: http, url: "https://kb.attacker.example/pages", token_secret: kbase }')).toEqual([
      expect.stringMatching(
        /^E215 routes\[0\]\.adapters\[0\]\.config\.target\.url: secret kbase may not be sent to https:\/\/kb\.attacker\.example:/,
      ),
    ]);
    // Without a secret nothing is sent: nothing to check.
    expect(kbase('{ kind: http, url: "https://kb.attacker.example/pages" }')).toEqual([]);
  });

  it('checks the Confluence target base_url', () => {
    const confluence = (baseUrl: string) =>
      kbase(`{ kind: confluence, base_url: "${baseUrl}", token_secret: wiki, space_key: KB }`);
    expect(confluence('https://acme.atlassian.net')).toEqual([]);
    expect(confluence('https://evil.atlassian.net')).toEqual([
      expect.stringMatching(
        /^E215 routes\[0\]\.adapters\[0\]\.config\.target\.base_url: secret wiki may not be sent to https:\/\/evil\.atlassian\.net:/,
      ),
    ]);
  });
});
