/**
 * What stands between a web page the user happens to visit and the API (issue 30). Without API
 * keys nothing else does: a browser on the same machine reaches 127.0.0.1:8080 like curl does.
 *
 * - Host check (DNS rebinding): a page on attacker.example whose name is re-pointed to
 *   127.0.0.1 is same-origin with itself and can read every answer; its requests carry
 *   `Host: attacker.example`. The service answers only Host names it serves (`allowedHosts`);
 *   others get 421 `host_not_allowed` before any route runs. The port in Host does not matter.
 * - Cross-site check (CSRF): a page can fire a POST without a body (run, cancel, reload) at any
 *   address; the browser marks it with `Origin` and `Sec-Fetch-Site`. A state-changing request
 *   (POST, PUT, PATCH, DELETE) marked as coming from another site or origin is refused with
 *   403 `cross_site_request_refused`. Requests without those headers (curl, SDKs, the CLI) are
 *   not from a browser page and pass as before.
 */
import net from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, errorBody } from '../errors.js';
import type { Settings } from '../settings.js';
import { setSecurityHeaders } from './browser-headers.js';

export interface AllowedHosts {
  /** Host names (lower-case, IPv6 without brackets) always answered. */
  names: ReadonlySet<string>;
  /** WEIR_ALLOWED_HOSTS: names an operator put the service behind; an Origin on them is trusted. */
  configured: ReadonlySet<string>;
  /** Bound to every address (0.0.0.0, ::): any IP literal names this service (see below). */
  anyAddress: boolean;
}

const WILDCARD_ADDRESSES = new Set(['0.0.0.0', '::', '']);
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/**
 * The Host names the service answers: `localhost`, the bound address (HOST), the loopback
 * addresses when bound to loopback, and WEIR_ALLOWED_HOSTS.
 *
 * Bound to every address (0.0.0.0 or ::), the service is reached by whatever addresses the
 * machine has, which change; any IP literal is taken then. That stays safe against DNS
 * rebinding: a browser sends an IP literal as Host only when the page's own URL is that IP,
 * whose origin is then this service's, never an attacker's name. Names (weir.example.com)
 * must be listed in WEIR_ALLOWED_HOSTS.
 */
export function allowedHosts(settings: Pick<Settings, 'host' | 'allowed_hosts'>): AllowedHosts {
  const bound = normalizeHostName(settings.host);
  const configured = new Set(settings.allowed_hosts.map(normalizeHostName).filter((name) => name !== ''));
  const names = new Set(['localhost', ...configured]);
  const anyAddress = WILDCARD_ADDRESSES.has(bound);
  if (!anyAddress) names.add(bound);
  if (anyAddress || isLoopbackName(bound)) for (const name of LOOPBACK_NAMES) names.add(name);
  return { names, configured, anyAddress };
}

function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '::1' || (net.isIPv4(name) && name.startsWith('127.'));
}

/** `Example.COM.` -> `example.com`; `[::1]` -> `::1`. */
function normalizeHostName(name: string): string {
  const lower = name.trim().toLowerCase();
  const unbracketed = lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
  return unbracketed.endsWith('.') ? unbracketed.slice(0, -1) : unbracketed;
}

/** A Host header (or an origin's authority) split into its name and port; the port may be absent. */
export function parseAuthority(authority: string): { name: string; port: string | undefined } {
  const text = authority.trim();
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0) return { name: normalizeHostName(text), port: undefined };
    const rest = text.slice(end + 1);
    return {
      name: normalizeHostName(text.slice(0, end + 1)),
      port: rest.startsWith(':') ? rest.slice(1) : undefined,
    };
  }
  const colon = text.lastIndexOf(':');
  // Two colons or more without brackets: a bare IPv6 address, no port.
  if (colon < 0 || text.indexOf(':') !== colon) return { name: normalizeHostName(text), port: undefined };
  return { name: normalizeHostName(text.slice(0, colon)), port: text.slice(colon + 1) };
}

export function isAllowedHostName(name: string, hosts: AllowedHosts): boolean {
  return hosts.names.has(name) || (hosts.anyAddress && net.isIP(name) !== 0);
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Why a request is refused as cross-site, or undefined when it is not.
 *
 * `Sec-Fetch-Site: same-site` is refused like `cross-site`: a site is a registrable domain
 * without its port, so every other web app on localhost (a dev server on :3000) is same-site
 * with the console. Only `same-origin` and `none` (typed in, a bookmark) pass.
 *
 * An `Origin` passes when it is this very origin (its host and port are the request's Host), or
 * when its name is in WEIR_ALLOWED_HOSTS (a reverse proxy may rewrite Host to 127.0.0.1:8080
 * while the page is https://weir.example.com). `Origin: null` (sandboxed frames, file: pages,
 * some redirects) is foreign.
 */
export function crossSiteReason(
  method: string,
  headers: FastifyRequest['headers'],
  hosts: AllowedHosts,
): string | undefined {
  if (!STATE_CHANGING.has(method)) return undefined;
  const fetchSite = headerText(headers['sec-fetch-site'])?.trim().toLowerCase();
  if (fetchSite === 'cross-site' || fetchSite === 'same-site')
    return `the browser marked this request Sec-Fetch-Site: ${fetchSite}`;
  const origin = headerText(headers.origin)?.trim();
  if (origin === undefined) return undefined;
  if (isOwnOrigin(origin, headerText(headers.host), hosts)) return undefined;
  return `the request comes from the page ${JSON.stringify(origin.slice(0, 200))}, not from this service`;
}

function isOwnOrigin(origin: string, host: string | undefined, hosts: AllowedHosts): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // `null` and anything else that is not an origin
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const originName = normalizeHostName(url.hostname);
  if (hosts.configured.has(originName)) return true;
  if (host === undefined) return false;
  const target = parseAuthority(host);
  const originPort = url.port || (url.protocol === 'https:' ? '443' : '80');
  // Host without a port: the scheme's default, which the Origin's port must then be.
  const samePort = target.port === undefined ? url.port === '' : target.port === originPort;
  return originName === target.name && samePort;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Installs the security headers, the Host check and the cross-site check as the first
 * onRequest hook, so they run before the API key check and for every route and plugin
 * registered after it (the console, the API docs, the API, 404s).
 */
export function installBrowserGuards(app: FastifyInstance, settings: Settings): void {
  const hosts = allowedHosts(settings);
  app.addHook('onRequest', async (request, reply) => {
    setSecurityHeaders(reply.raw, request.url);
    const host = headerText(request.headers.host);
    // No Host at all (HTTP/1.0): no browser sends that.
    if (host !== undefined && !isAllowedHostName(parseAuthority(host).name, hosts)) {
      const error = new AppError(
        'host_not_allowed',
        `this service does not answer for the host ${JSON.stringify(host.slice(0, 200))}: add its name to WEIR_ALLOWED_HOSTS`,
      );
      return reply.status(error.status).send(errorBody(error));
    }
    const reason = crossSiteReason(request.method, request.headers, hosts);
    if (reason) {
      const error = new AppError(
        'cross_site_request_refused',
        `${reason}; state-changing requests are taken only from the service's own pages and from clients that are not browsers`,
      );
      return reply.status(error.status).send(errorBody(error));
    }
  });
}
