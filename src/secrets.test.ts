import { describe, expect, it } from 'vitest';
import { secretOriginWarnings } from './secrets.js';
import { HIDDEN, loadSettings, SettingsError, sanitizeSettings } from './settings.js';

describe('secret origins in the settings', () => {
  it('reads WEIR_SECRET_<NAME>_ORIGINS as the origins of <name>, never as a secret of its own', () => {
    const settings = loadSettings({
      WEIR_SECRET_CONFLUENCE: 'planted-token',
      WEIR_SECRET_CONFLUENCE_ORIGINS: ' https://Acme.Atlassian.net:443/ , http://wiki.internal:8090',
    });
    expect(settings.secrets).toEqual({ confluence: 'planted-token' });
    // Compared as URL.origin: lower-cased host, default port dropped, no trailing slash.
    expect(settings.secret_origins).toEqual({
      confluence: ['https://acme.atlassian.net', 'http://wiki.internal:8090'],
    });
  });

  it('takes {value, origins} in WEIR_SECRETS beside the plain string form; the variable wins', () => {
    const settings = loadSettings({
      WEIR_SECRETS: JSON.stringify({
        graph: { value: 'g', origins: ['https://login.microsoftonline.com', 'https://graph.microsoft.com'] },
        kbase: 'k',
        wiki: { value: 'w', origins: ['https://old.example'] },
      }),
      WEIR_SECRET_WIKI_ORIGINS: 'https://new.example',
    });
    expect(settings.secrets).toEqual({ graph: 'g', kbase: 'k', wiki: 'w' });
    expect(settings.secret_origins).toEqual({
      graph: ['https://login.microsoftonline.com', 'https://graph.microsoft.com'],
      wiki: ['https://new.example'],
    });
  });

  it('shows the origins in /system/config and keeps hiding the values', () => {
    const sanitized = sanitizeSettings(
      loadSettings({
        WEIR_SECRET_CONFLUENCE: 'planted-token',
        WEIR_SECRET_CONFLUENCE_ORIGINS: 'https://acme.atlassian.net',
      }),
    );
    expect(JSON.stringify(sanitized)).not.toContain('planted');
    expect(sanitized.secrets).toBe(HIDDEN);
    expect(sanitized.secret_origins).toEqual({ confluence: ['https://acme.atlassian.net'] });
  });

  it.each([
    [{ WEIR_SECRET_WIKI: 'w', WEIR_SECRET_WIKI_ORIGINS: 'https://acme.example/wiki' }, /is not an origin/],
    [{ WEIR_SECRET_WIKI: 'w', WEIR_SECRET_WIKI_ORIGINS: 'ftp://acme.example' }, /is not an origin/],
    [{ WEIR_SECRET_WIKI: 'w', WEIR_SECRET_WIKI_ORIGINS: 'https://user@acme.example' }, /is not an origin/],
    [
      { WEIR_SECRET_WIKII_ORIGINS: 'https://acme.example' },
      /WEIR_SECRET_WIKII_ORIGINS is set but secret wikii is not/,
    ],
    [{ WEIR_SECRETS: JSON.stringify({ wiki_origins: 'x' }) }, /reserved for origins/],
    [{ WEIR_SECRETS: JSON.stringify({ wiki: { origins: [] } }) }, /must be a string or/],
  ])('refuses bad origins at start-up: %j', (environment, message) => {
    expect(() => loadSettings(environment)).toThrow(SettingsError);
    expect(() => loadSettings(environment)).toThrow(message);
  });

  it('warns at start-up about each secret that may go anywhere (*)', () => {
    const settings = loadSettings({
      WEIR_SECRET_DEV: 'd',
      WEIR_SECRET_DEV_ORIGINS: '*',
      WEIR_SECRET_PROD: 'p',
      WEIR_SECRET_PROD_ORIGINS: 'https://acme.example',
    });
    expect(settings.secret_origins.dev).toEqual(['*']);
    expect(secretOriginWarnings(settings)).toEqual([
      expect.stringMatching(/^secret dev may be sent to ANY origin \(WEIR_SECRET_DEV_ORIGINS=\*\)/),
    ]);
  });
});
