/**
 * The adapter registry: the one live list of adapter types (spec 2.3, 9.5). Config validation
 * reads it on every call, so registering or removing an adapter changes what every stored
 * config's report says on its next read without a re-save.
 */
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { AdapterDefinition } from './adapter.js';

export interface AdapterConfigError {
  /** JSON pointer into the adapter config, '' for the whole config. */
  path: string;
  message: string;
  keyword: string;
}

export interface AdapterConfigCheck {
  valid: boolean;
  errors: AdapterConfigError[];
  /** The config with schema defaults filled in. */
  config: Record<string, unknown>;
}

export interface AdapterRegistry {
  list(): AdapterDefinition[];
  get(type: string): AdapterDefinition | undefined;
  register(definition: AdapterDefinition): void;
  unregister(type: string): boolean;
  /** Validates `config` against the adapter's schema without creating an instance. */
  checkConfig(definition: AdapterDefinition, config: unknown): AdapterConfigCheck;
}

export function createAdapterRegistry(definitions: readonly AdapterDefinition[] = []): AdapterRegistry {
  const byType = new Map<string, AdapterDefinition>();
  const registry: AdapterRegistry = {
    list: () => [...byType.values()].sort((a, b) => a.type.localeCompare(b.type)),
    get: (type) => byType.get(type),
    register(definition) {
      if (byType.has(definition.type))
        throw new Error(`adapter type ${definition.type} is already registered`);
      if (!/^[a-z][a-z0-9_]*$/.test(definition.type)) {
        throw new Error(`adapter type ${JSON.stringify(definition.type)} must be snake_case`);
      }
      byType.set(definition.type, definition);
    },
    unregister: (type) => byType.delete(type),
    checkConfig: (definition, config) => checkAdapterConfig(definition.config, config),
  };
  for (const definition of definitions) registry.register(definition);
  return registry;
}

function checkAdapterConfig(schema: TSchema, config: unknown): AdapterConfigCheck {
  const given = config === undefined || config === null ? {} : config;
  if (typeof given !== 'object' || Array.isArray(given)) {
    return {
      valid: false,
      errors: [{ path: '', message: 'adapter config must be a mapping of fields', keyword: 'type' }],
      config: {},
    };
  }
  const withDefaults = Value.Default(schema, structuredClone(given)) as Record<string, unknown>;
  const errors = [...Value.Errors(schema, withDefaults)]
    // TypeBox reports an extra field twice (as `false` schema and as additionalProperties).
    .filter((error) => !(error.keyword === 'boolean' && error.schemaPath.endsWith('additionalProperties')))
    .map((error) => ({
      path: error.instancePath,
      message: describeError(error),
      keyword: error.keyword,
    }));
  return { valid: errors.length === 0, errors, config: withDefaults };
}

function describeError(error: { keyword: string; message: string; params: unknown }): string {
  if (error.keyword === 'additionalProperties') {
    const names = (error.params as { additionalProperties?: string[] }).additionalProperties ?? [];
    return `unknown field${names.length > 1 ? 's' : ''} ${names.map((name) => JSON.stringify(name)).join(', ')}`;
  }
  if (error.keyword === 'required') {
    const names = (error.params as { requiredProperties?: string[] }).requiredProperties ?? [];
    if (names.length > 0)
      return `missing required field ${names.map((name) => JSON.stringify(name)).join(', ')}`;
  }
  return error.message;
}
