/**
 * Pipeline configs as the API and the CLI see them: stored rows plus a validation report
 * derived against the live registry on every read (spec 9.5). Create and update persist even
 * an invalid config; only YAML that does not parse is refused (spec 3.4).
 */
import type { AdapterRegistry } from '../../adapters/registry.js';
import { refuseParsedNulCharacters } from '../../api/parsed-nul-characters.js';
import type { ConfigsRepository, StoredConfig } from '../../db/configs-repository.js';
import { AppError } from '../../errors.js';
import type { Settings } from '../../settings.js';
import { hashConfig, type ParsedConfig } from './parse-config.js';
import { parseConfigYamlOffThread } from './parse-thread.js';
import { type ValidationReport, validateParsedConfig } from './validate-config.js';

export interface ConfigSummary {
  id: string;
  name: string;
  description: string | null;
  origin: string;
  config_hash: string;
  version: number;
  created_at: string;
  updated_at: string;
  is_active: boolean;
  validation_report: ValidationReport;
  is_runnable: boolean;
}

export interface ConfigDetail extends ConfigSummary {
  config_yaml: string;
}

export interface CreateConfigInput {
  name?: string | undefined;
  description?: string | undefined;
  config_yaml: string;
  origin?: string | undefined;
}

export interface UpdateConfigInput {
  name?: string | undefined;
  description?: string | undefined;
  config_yaml?: string | undefined;
}

export interface ConfigStoreDependencies {
  repository: ConfigsRepository;
  registry: AdapterRegistry;
  /** Step configs are checked against them too (roots, models, profiles; E211-E213). */
  settings?: Readonly<Settings> | undefined;
  now: () => Date;
  newId: () => string;
}

export function createConfigStore({ repository, registry, settings, now, newId }: ConfigStoreDependencies) {
  // Every read parses the stored YAML again (the report follows the live registry): off the
  // event loop, like the parse of a new config.
  async function present(row: StoredConfig): Promise<ConfigDetail> {
    const report = validateParsedConfig(await parseConfigYamlOffThread(row.config_yaml), registry, settings);
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      origin: row.origin,
      config_hash: row.config_hash,
      version: row.version,
      created_at: new Date(row.created_at).toISOString(),
      updated_at: new Date(row.updated_at).toISOString(),
      is_active: row.is_active,
      validation_report: report,
      config_yaml: row.config_yaml,
      is_runnable: row.is_active && report.is_valid,
    };
  }

  return {
    registry,
    present,

    async create(input: CreateConfigInput): Promise<ConfigDetail> {
      const document = refuseUnparsed(await parseConfigYamlOffThread(input.config_yaml));
      const row = await repository.insert({
        id: newId(),
        name: input.name ?? nameFromDocument(document) ?? 'unnamed pipeline',
        description: input.description ?? descriptionFromDocument(document),
        origin: input.origin ?? 'api',
        config_yaml: input.config_yaml,
        config_hash: hashConfig(input.config_yaml),
        now: now(),
      });
      return present(row);
    },

    async findByOrigin(origin: string): Promise<ConfigDetail | undefined> {
      const row = await repository.findActiveByOrigin(origin);
      return row ? present(row) : undefined;
    },

    async get(id: string): Promise<ConfigDetail> {
      const row = await repository.findActive(id);
      if (!row) throw configNotFound(id);
      return present(row);
    },

    async list(page: {
      limit: number;
      offset: number;
    }): Promise<{ configs: ConfigSummary[]; total: number }> {
      const { configs, total } = await repository.listActive(page);
      return {
        configs: await Promise.all(
          configs.map(async (row) => {
            const { config_yaml: _yaml, ...summary } = await present(row);
            return summary;
          }),
        ),
        total,
      };
    },

    /** A page of active configs with their YAML (for callers that read every config). */
    async listDetails(page: { limit: number; offset: number }): Promise<ConfigDetail[]> {
      return Promise.all((await repository.listActive(page)).configs.map(present));
    },

    async update(id: string, input: UpdateConfigInput): Promise<ConfigDetail> {
      if (input.config_yaml !== undefined) refuseUnparsed(await parseConfigYamlOffThread(input.config_yaml));
      const row = await repository.update(id, {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.config_yaml !== undefined
          ? { config_yaml: input.config_yaml, config_hash: hashConfig(input.config_yaml) }
          : {}),
        now: now(),
      });
      if (!row) throw configNotFound(id);
      return present(row);
    },

    async remove(id: string): Promise<void> {
      if (!(await repository.deactivate(id, now()))) throw configNotFound(id);
    },

    /**
     * Refuses (422) a stored config whose parsed YAML holds a NUL, before a run writes any of
     * it to the database. Create and update refuse such YAML; a row stored before they did is
     * caught here rather than as a 500.
     */
    refuseNulCharactersOfStored(parsed: ParsedConfig): void {
      if (parsed.ok) refuseParsedNulCharacters(parsed.value, ['config_yaml']);
    },

    /** Validation without persistence; a parse error is a finding, never an exception. */
    async validate(configYaml: string): Promise<ValidationReport> {
      return validateParsedConfig(await parseConfigYamlOffThread(configYaml), registry, settings);
    },
  };
}

export type ConfigStore = ReturnType<typeof createConfigStore>;

function refuseUnparsed(parsed: ParsedConfig): unknown {
  if (parsed.ok) {
    // A YAML escape makes a NUL the database cannot store (a name, a payload): a 422, not a 500.
    refuseParsedNulCharacters(parsed.value, ['body', 'config_yaml']);
    return parsed.value;
  }
  const first = parsed.problems[0];
  const where = first?.line ? ` at line ${first.line}, column ${first.column}` : '';
  throw new AppError('config_yaml_invalid', `YAML parse error${where}: ${first?.message ?? 'invalid YAML'}`, {
    body: { errors: parsed.problems },
  });
}

function nameFromDocument(document: unknown): string | undefined {
  const name = (document as { name?: unknown } | null)?.name;
  return typeof name === 'string' && name.trim() !== '' ? name.trim().slice(0, 200) : undefined;
}

function descriptionFromDocument(document: unknown): string | null {
  const description = (document as { description?: unknown } | null)?.description;
  return typeof description === 'string' ? description : null;
}

function configNotFound(id: string): AppError {
  return new AppError('config_not_found', `config ${id} not found`);
}
