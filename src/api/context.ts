/** What the route modules get from buildApp: the ports, each possibly unavailable (503). */
import type { AdapterRegistry } from '../adapters/registry.js';
import type { Database } from '../db/database.js';
import type { ConfigStore } from '../engine/config/config-store.js';
import { AppError } from '../errors.js';
import type { Settings } from '../settings.js';
import type { ObjectStore } from '../storage/object-store.js';

export interface ApiContext {
  settings: Settings;
  database: Database | undefined;
  storage: ObjectStore | undefined;
  registry: AdapterRegistry | undefined;
  configs: ConfigStore | undefined;
  now: () => Date;
}

export function requireRegistry(context: ApiContext): AdapterRegistry {
  if (!context.registry) throw new AppError('registry_unavailable', 'the adapter registry is not available');
  return context.registry;
}

export function requireConfigs(context: ApiContext): ConfigStore {
  if (!context.configs) throw new AppError('database_unavailable', 'the config store is not available');
  return context.configs;
}
