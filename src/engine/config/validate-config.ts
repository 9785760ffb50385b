/**
 * Validation of pipeline configs (spec 2.5): the structural schema, then the rules that need
 * the whole document or the live adapter registry. Never throws for bad input; every problem
 * becomes a finding with a stable code, a path into the YAML, a message and a remediation.
 * The same input and registry always give the same report.
 */
import { Value } from 'typebox/value';
import type { AdapterRegistry } from '../../adapters/registry.js';
import type { Settings } from '../../settings.js';
import { type FindingCode, findingCodes } from './finding-codes.js';
import {
  article,
  describeAllowed,
  describeType,
  formatPath,
  isRecord,
  isRouteLevel,
  type PathSegment,
  pointerToPath,
  readPath,
  suggestion,
} from './finding-text.js';
import { type ParsedConfig, type Position, parseConfigYaml } from './parse-config.js';
import { monitoringChecks, PipelineDocumentSchema } from './pipeline-schema.js';
import { checkRouteCycles } from './route-cycles.js';

export interface ValidationFinding {
  severity: 'error' | 'warning';
  code: FindingCode;
  /** Dotted path into the YAML, e.g. `routes[0].adapters[1].config.count`; '' for the document. */
  path: string;
  message: string;
  remediation: string;
  line: number | null;
  column: number | null;
}

export interface ValidationReport {
  is_valid: boolean;
  error_count: number;
  warning_count: number;
  /** Errors first, then warnings; each group in document order. */
  findings: ValidationFinding[];
}

const ALIAS_REPLACEMENTS: Record<string, string> = { metadata_extractor: 'html_to_markdown' };

/**
 * Validates YAML text. A parse error is reported as finding E100 (and nothing else). With
 * `settings`, step configs are also checked against them (E211-E213: roots, models, profiles).
 */
export function validateConfigYaml(
  text: string,
  registry: AdapterRegistry,
  settings?: Readonly<Settings>,
): ValidationReport {
  return validateParsedConfig(parseConfigYaml(text), registry, settings);
}

/** The report of YAML already parsed (the service parses off its event loop: parse-thread.ts). */
export function validateParsedConfig(
  parsed: ParsedConfig,
  registry: AdapterRegistry,
  settings?: Readonly<Settings>,
): ValidationReport {
  if (!parsed.ok) {
    return buildReport(
      parsed.problems.map((problem) => ({
        severity: 'error',
        code: 'E100',
        path: '',
        message: `YAML parse error: ${problem.message}`,
        remediation:
          'Fix the YAML syntax at the given line and column; check indentation, quotes and duplicate keys.',
        line: problem.line,
        column: problem.column,
      })),
    );
  }
  return validateConfigDocument(parsed.value, registry, parsed.locate, settings);
}

export function validateConfigDocument(
  document: unknown,
  registry: AdapterRegistry,
  locate: (path: readonly PathSegment[]) => Position | undefined = () => undefined,
  settings?: Readonly<Settings>,
): ValidationReport {
  const findings: ValidationFinding[] = [];
  const add = (code: FindingCode, path: readonly PathSegment[], message: string, remediation: string) => {
    const position = locate(path);
    findings.push({
      severity: findingCodes[code].severity,
      code,
      path: formatPath(path),
      message,
      remediation,
      line: position?.line ?? null,
      column: position?.column ?? null,
    });
  };

  if (!isRecord(document)) {
    add(
      'E101',
      [],
      `the config must be a YAML mapping with a "routes" list, got ${describeType(document)}`,
      'Start the document with top-level keys such as "name:" and "routes:"; see docs/pipeline-config.md.',
    );
    return buildReport(findings);
  }

  checkStructure(document, add);
  checkRoutes(document, registry, add, settings);
  checkMonitoring(document, add);
  return buildReport(findings);
}

type AddFinding = (
  code: FindingCode,
  path: readonly PathSegment[],
  message: string,
  remediation: string,
) => void;

function checkStructure(document: Record<string, unknown>, add: AddFinding): void {
  // Fields with a default may be left out, as in adapter configs: fill them before checking.
  const withDefaults = Value.Default(PipelineDocumentSchema, structuredClone(document));
  for (const error of Value.Errors(PipelineDocumentSchema, withDefaults)) {
    const path = pointerToPath(error.instancePath);
    const params = error.params as Record<string, unknown>;
    switch (error.keyword) {
      case 'required':
        for (const name of (params.requiredProperties as string[]) ?? []) {
          add('E102', [...path, name], `required field "${name}" is missing`, `Add "${name}:" here.`);
        }
        break;
      case 'additionalProperties':
        for (const name of (params.additionalProperties as string[]) ?? []) {
          // A route-level `type` is reported by the route rules with a specific code.
          if (name === 'type' && isRouteLevel(path) && isSpecialType(readPath(document, [...path, name])))
            continue;
          add(
            'W501',
            [...path, name],
            `unknown field "${name}" is ignored`,
            `Remove "${name}" or check its spelling against docs/pipeline-config.md.`,
          );
        }
        break;
      case 'boolean':
        break; // the duplicate report TypeBox gives for additionalProperties: false
      case 'type':
        add(
          'E103',
          path,
          `${formatPath(path) || 'value'} must be ${article(String(params.type))}, got ${describeType(readPath(document, path))}`,
          `Write ${formatPath(path) || 'the value'} as ${article(String(params.type))}.`,
        );
        break;
      case 'minItems':
        add(
          'E104',
          path,
          `${formatPath(path)} must not be empty`,
          `Add at least one entry under ${formatPath(path)}.`,
        );
        break;
      default:
        add(
          'E104',
          path,
          `${formatPath(path)} ${error.message}`,
          describeAllowed(error.keyword, params) ?? 'See docs/pipeline-config.md for the allowed values.',
        );
    }
  }
}

/**
 * A step's `destination:` and any `*_destination` field of its config name routes of this
 * config; each named route is added to `targeted` (for the reachability checks).
 */
function checkStepDestinations(
  step: Record<string, unknown>,
  at: readonly (string | number)[],
  routeIds: ReadonlyMap<string, number>,
  targeted: Set<string>,
  add: AddFinding,
): void {
  if (typeof step.destination === 'string') {
    targeted.add(step.destination);
    if (!routeIds.has(step.destination)) {
      add(
        'E204',
        [...at, 'destination'],
        `destination "${step.destination}" is not a route of this config`,
        suggestion(step.destination, [...routeIds.keys()], 'route id') ??
          'Set destination to the id of a route defined under "routes".',
      );
    }
  }
  // A second destination in the step config (wiki_page_fetcher's `attachment_destination`):
  // any `*_destination` field names a route, like `destination:` does.
  const stepConfig = step.config;
  if (stepConfig && typeof stepConfig === 'object' && !Array.isArray(stepConfig)) {
    for (const [field, value] of Object.entries(stepConfig as Record<string, unknown>)) {
      if (!field.endsWith('_destination') || typeof value !== 'string') continue;
      targeted.add(value);
      if (!routeIds.has(value))
        add(
          'E204',
          [...at, 'config', field],
          `${field} "${value}" is not a route of this config`,
          suggestion(value, [...routeIds.keys()], 'route id') ??
            `Set ${field} to the id of a route defined under "routes".`,
        );
    }
  }
}

function checkRoutes(
  document: Record<string, unknown>,
  registry: AdapterRegistry,
  add: AddFinding,
  settings: Readonly<Settings> | undefined,
): void {
  const routes = Array.isArray(document.routes) ? document.routes : [];
  const routeIds = new Map<string, number>();
  routes.forEach((route, routeIndex) => {
    if (!isRecord(route) || typeof route.id !== 'string') return;
    const first = routeIds.get(route.id);
    if (first !== undefined) {
      add(
        'E201',
        ['routes', routeIndex, 'id'],
        `route id "${route.id}" is already used by routes[${first}]`,
        'Give every route its own id; queue names are derived from it.',
      );
    } else routeIds.set(route.id, routeIndex);
  });

  const targeted = new Set<string>();
  routes.forEach((route, routeIndex) => {
    if (!isRecord(route)) return;
    if (typeof route.type === 'string') checkSpecialType(route.type, ['routes', routeIndex, 'type'], add);
    const steps = Array.isArray(route.adapters) ? route.adapters : [];
    const stageNames = new Map<string, number>();
    let terminalStage: string | undefined;
    steps.forEach((step, stepIndex) => {
      if (!isRecord(step)) return;
      const at = ['routes', routeIndex, 'adapters', stepIndex] as const;
      const type = typeof step.type === 'string' ? step.type : undefined;
      const stage = typeof step.name === 'string' ? step.name : type;
      if (stage !== undefined) {
        const first = stageNames.get(stage);
        if (first !== undefined) {
          add(
            'E208',
            [...at, typeof step.name === 'string' ? 'name' : 'type'],
            `stage name "${stage}" is already used by adapters[${first}] of this route`,
            `Give one of them a distinct "name:"; stage names key stored outputs and lineage.`,
          );
        } else stageNames.set(stage, stepIndex);
      }
      if (terminalStage !== undefined) {
        add(
          'W503',
          at,
          `this stage follows the terminal stage "${terminalStage}" and will never receive a message`,
          `Move it before "${terminalStage}", or into a route of its own.`,
        );
      }
      checkStepDestinations(step, at, routeIds, targeted, add);
      if (type === undefined || checkSpecialType(type, [...at, 'type'], add)) return;
      const definition = registry.get(type);
      if (!definition) {
        add(
          'E202',
          [...at, 'type'],
          `adapter type "${type}" is not registered`,
          suggestion(
            type,
            registry.list().map((entry) => entry.type),
            'adapter type',
          ) ?? 'Use a type listed by GET /api/v1/adapters.',
        );
        return;
      }
      if (step.config === undefined || isRecord(step.config)) {
        const check = registry.checkConfig(definition, step.config ?? {});
        for (const error of check.errors) {
          add(
            'E203',
            [...at, 'config', ...pointerToPath(error.path)],
            `${type} config: ${error.message}`,
            `Fix the config against the schema at GET /api/v1/adapters/${type}.`,
          );
        }
        if (settings && check.valid && definition.checkSettings) {
          for (const problem of definition.checkSettings(check.config as never, settings))
            add(problem.code, [...at, 'config', ...problem.field], problem.message, problem.remediation);
        }
      }
      if (step.batch !== undefined && !definition.batch) {
        add(
          'E210',
          [...at, 'batch'],
          `${type} handles one message at a time and does not accept batches`,
          'Remove "batch:" from this step; see GET /api/v1/adapters/{type} for adapters that accept batches.',
        );
      }
      if (definition.terminal) terminalStage ??= stage;
      if (definition.fanOut && stepIndex === steps.length - 1 && step.destination === undefined) {
        add(
          'W504',
          at,
          `${type} fans out, but it is the last stage and has no destination, so its outputs are dropped`,
          'Add "destination: <route id>" to this stage or add a stage after it.',
        );
      }
    });
  });

  const initMessage = isRecord(document.init_message) ? document.init_message : {};
  const firstRoute = routes.find((route) => isRecord(route) && typeof route.id === 'string') as
    | { id: string }
    | undefined;
  // An unknown init route is reported as E209; reachability is then judged from the first route.
  const initRoute =
    typeof initMessage.route === 'string' && routeIds.has(initMessage.route)
      ? initMessage.route
      : firstRoute?.id;
  if (typeof initMessage.route === 'string' && !routeIds.has(initMessage.route)) {
    add(
      'E209',
      ['init_message', 'route'],
      `init_message.route "${initMessage.route}" is not a route of this config`,
      suggestion(initMessage.route, [...routeIds.keys()], 'route id') ??
        'Name one of the routes, or leave it out to use the first.',
    );
  }
  checkRouteCycles(routes, registry, document.allow_fanout_cycles === true, add);
  for (const [routeId, routeIndex] of routeIds) {
    if (routeId === initRoute || targeted.has(routeId)) continue;
    add(
      'W502',
      ['routes', routeIndex, 'id'],
      `route "${routeId}" gets no init message and no stage sends to it; only a replay can feed it`,
      `Point a stage's "destination:" at "${routeId}", set init_message.route to it, or remove it.`,
    );
  }
}

/** Rules 3-5 of spec 2.3. True when `type` was one of the reserved words (finding added). */
function checkSpecialType(type: string, path: readonly PathSegment[], add: AddFinding): boolean {
  const replacement = ALIAS_REPLACEMENTS[type];
  if (replacement) {
    add(
      'E205',
      path,
      `"${type}" is an alias that is not registered in a running server`,
      `Use "type: ${replacement}" instead.`,
    );
    return true;
  }
  if ((monitoringChecks as readonly string[]).includes(type)) {
    add(
      'E206',
      path,
      `"${type}" is a monitoring check, not an adapter type`,
      `Remove this entry and list "${type}" under monitoring.checks instead.`,
    );
    return true;
  }
  if (type === 'replay') {
    add(
      'E207',
      path,
      '"replay" is not an adapter type; replay is invoked through the API',
      'Remove this entry and call POST /api/v1/replay with the source prefix and this route as target.',
    );
    return true;
  }
  return false;
}

function isSpecialType(value: unknown): boolean {
  return (
    typeof value === 'string' &&
    (value in ALIAS_REPLACEMENTS ||
      value === 'replay' ||
      (monitoringChecks as readonly string[]).includes(value))
  );
}

function checkMonitoring(document: Record<string, unknown>, add: AddFinding): void {
  const monitoring = document.monitoring;
  if (!isRecord(monitoring) || !Array.isArray(monitoring.checks)) return;
  monitoring.checks.forEach((check, index) => {
    if (typeof check !== 'string' || (monitoringChecks as readonly string[]).includes(check)) return;
    add(
      'E301',
      ['monitoring', 'checks', index],
      `"${check}" is not a monitoring check`,
      `Use one of: ${monitoringChecks.join(', ')}.`,
    );
  });
}

function buildReport(findings: ValidationFinding[]): ValidationReport {
  // Stable sort: findings without a position keep the order the rules found them in.
  const inDocumentOrder = [...findings].sort(
    (a, b) =>
      (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER) ||
      (a.column ?? Number.MAX_SAFE_INTEGER) - (b.column ?? Number.MAX_SAFE_INTEGER),
  );
  const errors = inDocumentOrder.filter((finding) => finding.severity === 'error');
  const warnings = inDocumentOrder.filter((finding) => finding.severity === 'warning');
  return {
    is_valid: errors.length === 0,
    error_count: errors.length,
    warning_count: warnings.length,
    findings: [...errors, ...warnings],
  };
}
