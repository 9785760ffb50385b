/**
 * Registration-time check of a webhook URL: http(s) only, and every address its host resolves
 * to must pass the address policy. The dispatcher checks again at connect time (a name can be
 * re-pointed after registration), so this check is for a clear 400, not the only guard.
 */
import { type Resolver, resolveGuarded, urlHost } from '../http/guarded-lookup.js';
import type { AddressPolicy } from './address-policy.js';

export type TargetProblem = { kind: 'invalid' | 'refused'; message: string };

export async function checkWebhookTarget(
  text: string,
  policy: AddressPolicy,
  resolve?: Resolver,
): Promise<TargetProblem | undefined> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { kind: 'invalid', message: `${JSON.stringify(text)} is not an absolute URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      kind: 'invalid',
      message: `webhook URLs must be http or https, not ${url.protocol.replace(':', '')}`,
    };
  }
  const host = urlHost(url);
  let checked: Awaited<ReturnType<typeof resolveGuarded>>;
  try {
    checked = await resolveGuarded(host, policy, resolve);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'lookup failed';
    return { kind: 'invalid', message: `the host ${host} cannot be resolved (${code})` };
  }
  if (checked.refusal)
    return { kind: 'refused', message: `webhook target ${host} refused: ${checked.refusal}` };
  return undefined;
}
