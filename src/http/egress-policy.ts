/**
 * Where an outbound request may connect: an address guard applied in the connection step of
 * the one outbound client (outbound.ts), on every connection it opens and so on every redirect
 * hop. The connector resolves a name itself (`lookup`, injectable), checks every address, and
 * dials the checked address (no second lookup, so a name re-pointed in between, DNS rebinding,
 * gains nothing); an IP-literal host is checked the same way before it is dialled.
 *
 * Each caller keeps its own allow-list:
 * - the web fetchers, wiki, SharePoint, kbase_writer and the publishers: `egressPolicy`, public
 *   and private addresses (intranet crawling is their job), others only where
 *   WEIR_FETCH_ALLOWED_CIDRS lists them;
 * - the OpenAI-compatible LLM and embedding endpoints: `modelEndpointPolicy`, which also passes
 *   loopback (the operator names them in WEIR_LLM_PROFILES / WEIR_EMBEDDING_MODELS, and a local
 *   Ollama or vLLM is normal) but never link-local or cloud metadata addresses;
 * - webhooks: src/webhooks/address-policy.ts, public only unless WEIR_WEBHOOK_ALLOWED_CIDRS.
 */
import type { LookupAddress } from 'node:dns';
import type { Agent, buildConnector, Dispatcher } from 'undici';
import {
  type AddressClass,
  type AddressGuard,
  classifyAddress,
  createAddressGuard,
  describeAddress,
} from './address-classification.js';
import { type Resolver, resolveGuarded, urlHost } from './guarded-lookup.js';
import { undici } from './undici.js';

export type { Resolver };

export const FETCH_ALLOW_SETTING = 'WEIR_FETCH_ALLOWED_CIDRS';
/** The `code` of a connection the fetchers' policy refused. */
export const EGRESS_REFUSED = 'EEGRESSREFUSED';

/** Opens the connection to a checked address (undici's connector by default). */
export type Connector = buildConnector.connector;

export interface EgressPolicyOptions {
  guard: AddressGuard;
  /** Starts refusal messages: `<label> <host> refused: <why>`. */
  label: string;
  /** The `code` of the error a refused connection fails with. */
  code: string;
  /** For tests: names resolved without DNS. */
  lookup?: Resolver;
  /** For tests: the step that dials a checked address (one that never leaves the machine). */
  connect?: Connector;
  /** Connections per origin (undici's `connections`); unlimited by default. */
  connections?: number;
}

export interface EgressPolicy {
  readonly guard: AddressGuard;
  readonly label: string;
  readonly code: string;
  /**
   * For outbound.ts only: the dispatcher whose every connection passes the guard. Made (and
   * undici loaded, undici.ts) when first asked for.
   */
  readonly dispatcher: Dispatcher;
  /** Why a URL with an IP-literal host is refused (names are checked when connecting). */
  refusal(url: URL): string | undefined;
  /**
   * Resolves the URL's host and checks every address: why it is refused, if it is. For
   * connections this process does not make itself (Chromium's), which resolve again.
   */
  check(url: URL): Promise<string | undefined>;
  /** Resolves a host (a name or an IP literal) and checks every address. */
  decide(host: string): ReturnType<typeof resolveGuarded>;
  /** Drops the dispatcher's connections (a policy of its own, like a webhook sender's). */
  close(): Promise<void>;
}

/** An error saying the policy refused a host; `code` tells it from network errors. */
export function egressRefusal(policy: Pick<EgressPolicy, 'label' | 'code'>, host: string, why: string) {
  return Object.assign(new Error(`${policy.label} ${host} refused: ${why}`), { code: policy.code });
}

/** Hosts whose refusal a policy remembers (forgotten all at once past this). */
const REMEMBERED_HOSTS = 1024;

export function createEgressPolicy(options: EgressPolicyOptions): EgressPolicy {
  let dial: Connector | undefined = options.connect;
  const decide = (host: string) => resolveGuarded(host, options.guard, options.lookup);

  // Every connection the dispatcher opens, for any request and any redirect hop, comes here.
  const guardedConnect: Connector = (connectOptions, callback) => {
    decide(connectOptions.hostname).then(
      (decision) => {
        if (decision.refusal !== undefined)
          return callback(egressRefusal(options, connectOptions.hostname, decision.refusal), null);
        const first = decision.addresses[0] as LookupAddress;
        // `host` (the URL's host) stays: TLS takes the server name from it, not from the address.
        dial ??= undici().buildConnector({});
        dial({ ...connectOptions, hostname: first.address }, callback);
      },
      (error: Error) => callback(error, null),
    );
  };

  let agent: Agent | undefined;
  // Hosts' refusals ('' = none), as `refusal` worked them out.
  const refusals = new Map<string, string>();
  const policy: EgressPolicy = {
    guard: options.guard,
    label: options.label,
    code: options.code,
    get dispatcher() {
      agent ??= new (undici().Agent)({
        connect: guardedConnect,
        ...(options.connections ? { connections: options.connections } : {}),
      });
      return agent;
    },
    refusal(url) {
      // The guard's answer for a host never changes: each is worked out once (a webhook
      // sender asks on every delivery to the same few hosts).
      const known = refusals.get(url.hostname);
      if (known !== undefined) return known || undefined;
      const host = urlHost(url);
      const refused = classifyAddress(host) ? options.guard.refusal(host) : undefined;
      const answer = refused ? `${options.label} ${url.hostname} refused: ${refused}` : undefined;
      if (refusals.size >= REMEMBERED_HOSTS) refusals.clear();
      refusals.set(url.hostname, answer ?? '');
      return answer;
    },
    async check(url) {
      if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) return undefined;
      try {
        const decision = await decide(urlHost(url));
        return decision.refusal === undefined
          ? undefined
          : `${options.label} ${url.hostname} refused: ${decision.refusal}`;
      } catch {
        return undefined; // does not resolve: the connection fails on its own
      }
    },
    decide,
    close: async () => {
      await agent?.destroy();
    },
  };
  return policy;
}

const fetchPermitted: ReadonlySet<AddressClass> = new Set(['global', 'private', 'carrier_grade_nat']);
const policies = new Map<string, EgressPolicy>();

/** For tests: a policy's resolver and connection step, replaced (the policy is then not shared). */
export type EgressTestHooks = Pick<EgressPolicyOptions, 'lookup' | 'connect'>;

/**
 * The fetchers' policy for an allow-list (settings.fetch_allowed_cidrs); one per distinct list,
 * so adapter instances share its connection pool. Throws on a malformed CIDR.
 */
export function egressPolicy(allowedCidrs: readonly string[], hooks?: EgressTestHooks): EgressPolicy {
  const key = allowedCidrs.map((entry) => entry.trim()).join(',');
  const known = hooks ? undefined : policies.get(key);
  if (known) return known;
  const policy = createEgressPolicy({
    guard: createAddressGuard({ permitted: fetchPermitted, allowedCidrs, setting: FETCH_ALLOW_SETTING }),
    label: 'fetch from',
    code: EGRESS_REFUSED,
    ...hooks,
  });
  if (!hooks) policies.set(key, policy);
  return policy;
}

const modelPermitted: ReadonlySet<AddressClass> = new Set([
  'global',
  'private',
  'carrier_grade_nat',
  'loopback',
]);
let modelPolicy: EgressPolicy | undefined;

/**
 * The policy of the OpenAI-compatible LLM and embedding calls (one, shared): the endpoints are
 * the operator's own settings, so loopback and private hosts pass; link-local, cloud metadata
 * and the other special-purpose ranges never do (no setting opens them).
 */
export function modelEndpointPolicy(hooks?: EgressTestHooks): EgressPolicy {
  if (modelPolicy && !hooks) return modelPolicy;
  const classes = createAddressGuard({ permitted: modelPermitted, allowedCidrs: [], setting: '' });
  const guard: AddressGuard = {
    refusal(address) {
      const classification = classifyAddress(address);
      if (!classification) return `${address} is not an IP address`;
      return classes.refusal(address) === undefined
        ? undefined
        : `${address} is ${describeAddress(classification)}, never a model endpoint`;
    },
  };
  const policy = createEgressPolicy({ guard, label: 'model endpoint', code: EGRESS_REFUSED, ...hooks });
  if (!hooks) modelPolicy = policy;
  return policy;
}
