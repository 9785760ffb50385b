/**
 * Named secrets and the origins each may be sent to.
 *
 * A pipeline step names a secret (`token_secret: confluence`) instead of holding it, and whoever
 * can write a config can name any secret. So the secret itself says where it may go: the
 * origins (scheme, host and port) it may be sent to, the way a token in `.npmrc` or Docker's
 * `config.json` is keyed by the registry it belongs to.
 * - `WEIR_SECRET_<NAME>=<value>` beside `WEIR_SECRET_<NAME>_ORIGINS=https://acme.atlassian.net,...`;
 * - in WEIR_SECRETS (JSON) or the settings file, a name maps to its value or to
 *   `{"value": ..., "origins": [...]}`; `secret_origins` in the file names origins on its own.
 * A secret without origins is sent nowhere. `*` lets it go anywhere: a development opt-out that
 * the service warns about at start-up and validation flags on every step using it (W507).
 *
 * Since `WEIR_SECRET_<NAME>_ORIGINS` would otherwise read as a secret named `<name>_origins`,
 * no secret may have a name ending in `_origins`.
 *
 * The functions here return problems instead of throwing: settings.ts reports them all in one
 * SettingsError. They never put a secret value into a problem.
 */

/** The origins entry that lets a secret go anywhere (development only). */
export const ANY_ORIGIN = '*';

const ORIGINS_SUFFIX = '_origins';
const SECRET_PREFIX = 'WEIR_SECRET_';

/** The environment variable declaring where the secret `name` may be sent. */
export function originsVariable(name: string): string {
  return `${SECRET_PREFIX}${name.toUpperCase()}_ORIGINS`;
}

/** `scheme://host[:port]` of an http(s) URL, default ports dropped; undefined when it is not one. */
export function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}

/** A declared origin as it is compared (URL.origin), `*`, or undefined when it is no origin. */
function declaredOrigin(text: string): string | undefined {
  if (text === ANY_ORIGIN) return ANY_ORIGIN;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  // An origin is exactly scheme, host and port: a path, query or user would suggest a narrower
  // binding than the one enforced.
  const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  return bare && (url.protocol === 'http:' || url.protocol === 'https:') ? url.origin : undefined;
}

export interface RawSecrets {
  secrets?: Record<string, unknown>;
  secret_origins?: Record<string, unknown>;
}

/**
 * WEIR_SECRETS (a JSON object) overlaid with every WEIR_SECRET_<NAME> and
 * WEIR_SECRET_<NAME>_ORIGINS, as raw settings fields (absent when nothing is set).
 */
export function secretsFromEnvironment(environment: Record<string, string | undefined>): {
  raw: RawSecrets;
  problems: string[];
} {
  const raw: RawSecrets = {};
  const problems: string[] = [];
  const all = environment.WEIR_SECRETS;
  if (all) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(all);
    } catch {
      problems.push('WEIR_SECRETS cannot be parsed: it must be a JSON object of names to values');
    }
    if (parsed !== undefined && !isRecord(parsed))
      problems.push('WEIR_SECRETS must be a JSON object of names to values');
    else if (parsed !== undefined) raw.secrets = { ...parsed };
  }
  for (const [variable, value] of Object.entries(environment)) {
    if (!variable.startsWith(SECRET_PREFIX) || value === undefined || value === '') continue;
    const name = variable.slice(SECRET_PREFIX.length).toLowerCase();
    if (name.endsWith(ORIGINS_SUFFIX)) {
      raw.secret_origins ??= {};
      raw.secret_origins[name.slice(0, -ORIGINS_SUFFIX.length)] = value;
    } else {
      raw.secrets ??= {};
      raw.secrets[name] = value;
    }
  }
  return { raw, problems };
}

/**
 * The settings fields `secrets` (name -> value) and `secret_origins` (name -> origins as
 * URL.origin, or `*`) from their raw forms: a value or `{value, origins}`, origins as a list or
 * comma-separated text. Origins named on their own win over those inside `{value, origins}`.
 */
export function normalizeSecrets(raw: RawSecrets): {
  secrets: Record<string, string>;
  secret_origins: Record<string, string[]>;
  problems: string[];
} {
  const secrets: Record<string, string> = {};
  const declared: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const field of ['secrets', 'secret_origins'] as const)
    if (raw[field] !== undefined && !isRecord(raw[field]))
      problems.push(`${field} must be a mapping of names`);
  if (problems.length > 0) return { secrets, secret_origins: {}, problems };
  for (const [name, entry] of Object.entries(raw.secrets ?? {})) {
    if (name.endsWith(ORIGINS_SUFFIX)) {
      problems.push(
        `secret ${name}: a name ending in ${ORIGINS_SUFFIX} is reserved for origins (${originsVariable(name.slice(0, -ORIGINS_SUFFIX.length))}); rename the secret`,
      );
      continue;
    }
    if (typeof entry === 'string') secrets[name] = entry;
    else if (isRecord(entry) && typeof entry.value === 'string') {
      secrets[name] = entry.value;
      if (entry.origins !== undefined) declared[name] = entry.origins;
    } else problems.push(`secret ${name} must be a string or {"value": "...", "origins": [...]}`);
  }
  Object.assign(declared, raw.secret_origins ?? {});
  const secretOrigins: Record<string, string[]> = {};
  for (const [name, list] of Object.entries(declared)) {
    const variable = originsVariable(name);
    if (!(name in secrets)) {
      problems.push(
        `${variable} is set but secret ${name} is not: set WEIR_SECRET_${name.toUpperCase()} too`,
      );
      continue;
    }
    const texts = typeof list === 'string' ? list.split(',') : Array.isArray(list) ? list : undefined;
    if (!texts || texts.some((text) => typeof text !== 'string')) {
      problems.push(`${variable} must be a list of origins (comma-separated in the environment)`);
      continue;
    }
    const origins: string[] = [];
    for (const text of (texts as string[]).map((item) => item.trim()).filter(Boolean)) {
      const origin = declaredOrigin(text);
      if (origin === undefined)
        problems.push(
          `${variable}: ${JSON.stringify(text.slice(0, 200))} is not an origin: write scheme://host[:port], e.g. https://acme.atlassian.net (no path), or * for any`,
        );
      else if (!origins.includes(origin)) origins.push(origin);
    }
    secretOrigins[name] = origins;
  }
  return { secrets, secret_origins: secretOrigins, problems };
}

/** The start-up warning for each secret that may be sent to any origin (`*`). */
export function secretOriginWarnings(settings: { secret_origins: Record<string, string[]> }): string[] {
  return Object.entries(settings.secret_origins)
    .filter(([, origins]) => origins.includes(ANY_ORIGIN))
    .map(
      ([name]) =>
        `secret ${name} may be sent to ANY origin (${originsVariable(name)}=*): whoever can write a config can send it to their own server. For development only: list its origins instead.`,
    );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
