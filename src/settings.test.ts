import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HIDDEN, loadSettings, SettingsError, sanitizeSettings } from './settings.js';

describe('loadSettings', () => {
  it('has working defaults with an empty environment', () => {
    const settings = loadSettings({});
    expect(settings).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      data_dir: './.weir',
      api_keys: [],
      embedding_models: [{ name: 'hash', provider: 'hash' }],
      llm_profiles: [{ name: 'extractive', provider: 'extractive' }],
    });
    expect(settings.database_url).toBeUndefined();
    expect(settings.broker_url).toBeUndefined();
  });

  it('reads environment variables', () => {
    const settings = loadSettings({
      HOST: '0.0.0.0',
      PORT: '9000',
      WEIR_DATA_DIR: '/var/lib/weir',
      DATABASE_URL: 'postgres://db/weir',
      WEIR_API_KEYS: ' a , b ,,',
    });
    expect(settings).toMatchObject({
      host: '0.0.0.0',
      port: 9000,
      data_dir: '/var/lib/weir',
      database_url: 'postgres://db/weir',
      api_keys: ['a', 'b'],
    });
  });

  it('reads a YAML settings file, and the environment wins over it', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'weir-settings-'));
    const file = path.join(folder, 'weir.yaml');
    await writeFile(
      file,
      'port: 7000\nhost: 10.0.0.1\nllm_profiles:\n  - { name: local, provider: openai, base_url: "http://127.0.0.1:1/v1" }\n',
    );
    const settings = loadSettings({ WEIR_CONFIG_FILE: file, PORT: '7001' });
    expect(settings).toMatchObject({
      port: 7001,
      host: '10.0.0.1',
      llm_profiles: [{ name: 'local', provider: 'openai' }],
    });
  });

  it('names every bad field without echoing secrets', () => {
    expect(() => loadSettings({ PORT: 'eighty', WEIR_LOG_LEVEL: 'loud' })).toThrow(SettingsError);
    const bad = () =>
      loadSettings({
        PORT: '70000',
        WEIR_LLM_PROFILES: '[{"name":"x","provider":"mystery","api_key":"planted"}]',
      });
    expect(bad).toThrow(SettingsError);
    expect(bad).toThrow('/port');
    expect(bad).toThrow('/llm_profiles/0');
    expect(bad).not.toThrow('planted');
    expect(() => loadSettings({ WEIR_EMBEDDING_MODELS: '{not json' })).toThrow(
      /WEIR_EMBEDDING_MODELS cannot be parsed/,
    );
    expect(() => loadSettings({ WEIR_CONFIG_FILE: '/nonexistent/weir.yaml' })).toThrow(/cannot be read/);
  });
});

describe('secrets', () => {
  it('reads WEIR_SECRET_<NAME> over WEIR_SECRETS, and never shows them', () => {
    const settings = loadSettings({
      WEIR_SECRETS: JSON.stringify({ wiki: 'from-json', graph: 'g' }),
      WEIR_SECRET_WIKI: 'from-variable',
    });
    expect(settings.secrets).toEqual({ wiki: 'from-variable', graph: 'g' });
    expect(sanitizeSettings(settings).secrets).toBe(HIDDEN);
    expect(() => loadSettings({ WEIR_SECRETS: '[1]' })).toThrow(SettingsError);
  });
});

describe('sanitizeSettings', () => {
  it('hides every field marked secret and URL passwords, keeping the rest', () => {
    const settings = loadSettings({
      DATABASE_URL: 'postgres://weir:planted-db-password@db:5432/weir?sslpassword=planted-ssl',
      BROKER_URL: 'stomp://guest:planted-broker@mq:61613',
      STORAGE_URL: 's3://bucket/prefix',
      WEIR_API_KEYS: 'planted-key',
      WEIR_EMBEDDING_MODELS: JSON.stringify([
        { name: 'remote', provider: 'openai', base_url: 'http://e/v1', api_key: 'planted-embed' },
      ]),
      WEIR_LLM_PROFILES: JSON.stringify([{ name: 'remote', provider: 'openai', api_key: 'planted-llm' }]),
    });
    const sanitized = sanitizeSettings(settings);
    expect(JSON.stringify(sanitized)).not.toContain('planted');
    expect(sanitized.api_keys).toEqual([HIDDEN]);
    expect(sanitized.database_url).toBe(
      `postgres://weir:${encodeURIComponent(HIDDEN)}@db:5432/weir?sslpassword=${encodeURIComponent(HIDDEN)}`,
    );
    expect(sanitized.storage_url).toBe('s3://bucket/prefix');
    expect((sanitized.llm_profiles as Array<Record<string, unknown>>)[0]).toMatchObject({
      name: 'remote',
      api_key: HIDDEN,
    });
  });

  it('hides a secret URL it cannot parse', () => {
    const settings = { ...loadSettings({}), broker_url: 'not a url with planted secret' };
    expect(sanitizeSettings(settings).broker_url).toBe(HIDDEN);
  });
});
