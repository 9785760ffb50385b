/**
 * Cycles of routes joined by `destination:`. Each strongly connected group of two or more
 * routes is reported once (W506), with one concrete round trip and the first step, in document
 * order, that leaves on it; a stage sending back into its own route is W505. A cycle through a
 * step that may emit more than one message per input grows without end (issue 30: two
 * `synthetic_fanout {count: 2}` routes had 22,000 messages pending after 20 s): it is error
 * E216 unless the config sets `allow_fanout_cycles: true`, and the run is then bounded by the
 * execution's message budget.
 */
import type { AdapterRegistry } from '../../adapters/registry.js';
import type { FindingCode } from './finding-codes.js';

export interface RouteCycle {
  /** Route ids of the round trip, the first repeated at the end: `a -> b -> a`. */
  path: string[];
  /** Every route of the strongly connected group, in document order. */
  members: string[];
  /** The step that sends the cycle's first route to the next one. */
  routeIndex: number;
  stepIndex: number;
}

interface Edge {
  to: string;
  routeIndex: number;
  stepIndex: number;
}

export function findRouteCycles(routes: readonly unknown[]): RouteCycle[] {
  const edges = new Map<string, Edge[]>();
  routes.forEach((route, routeIndex) => {
    if (!isRecord(route) || typeof route.id !== 'string') return;
    const from = route.id;
    if (!edges.has(from)) edges.set(from, []);
    const steps = Array.isArray(route.adapters) ? route.adapters : [];
    steps.forEach((step, stepIndex) => {
      if (isRecord(step) && typeof step.destination === 'string' && step.destination !== from)
        edges.get(from)?.push({ to: step.destination, routeIndex, stepIndex });
    });
  });
  const cycles: RouteCycle[] = [];
  for (const group of stronglyConnected(edges)) {
    if (group.length < 2) continue;
    const members = new Set(group);
    const start = group[0] as string;
    const trip = roundTrip(start, members, edges);
    const first = (edges.get(start) ?? []).find((edge) => edge.to === trip[1]) as Edge;
    cycles.push({ path: trip, members: group, routeIndex: first.routeIndex, stepIndex: first.stepIndex });
  }
  return cycles;
}

type AddFinding = (
  code: FindingCode,
  path: ReadonlyArray<string | number>,
  message: string,
  remediation: string,
) => void;

const BOUNDED_BY =
  'the run is then bounded by the max_messages_per_execution budget and the max_lineage_depth setting';

/**
 * Reports cycles of routes: W505 for a stage sending into its own route, W506 for routes
 * sending to each other; E216 instead of either when a step on the cycle may fan out and the
 * config does not set `allow_fanout_cycles: true`.
 */
export function checkRouteCycles(
  routes: readonly unknown[],
  registry: AdapterRegistry,
  allowFanoutCycles: boolean,
  add: AddFinding,
): void {
  const fanning = (members: ReadonlySet<string>) =>
    allowFanoutCycles ? undefined : fanOutStep(routes, members, registry);
  routes.forEach((route, routeIndex) => {
    if (!isRecord(route) || typeof route.id !== 'string' || !Array.isArray(route.adapters)) return;
    const id = route.id;
    route.adapters.forEach((step, stepIndex) => {
      if (!isRecord(step) || step.destination !== id) return;
      const at = ['routes', routeIndex, 'adapters', stepIndex, 'destination'];
      const fanOut = fanning(new Set([id]));
      if (fanOut)
        add(
          'E216',
          at,
          `this stage sends its outputs back into its own route "${id}", and ${fanOut} may emit more than one message per input, so the run may grow without end`,
          `Break the loop or use steps that emit one message per input; if an adapter on the way stops emitting (a depth or page limit), set "allow_fanout_cycles: true": ${BOUNDED_BY}.`,
        );
      else
        add(
          'W505',
          at,
          `this stage sends its outputs back into its own route "${id}"`,
          'Make sure the adapter stops emitting (for example a crawl depth limit), or the route never ends.',
        );
    });
  });
  for (const cycle of findRouteCycles(routes)) {
    const at = ['routes', cycle.routeIndex, 'adapters', cycle.stepIndex, 'destination'];
    const trip = cycle.path.map((id) => `"${id}"`).join(' -> ');
    const fanOut = fanning(new Set(cycle.members));
    if (fanOut)
      add(
        'E216',
        at,
        `routes ${trip} send messages round in a cycle, and ${fanOut} may emit more than one message per input, so the run may grow without end`,
        `Break the cycle or use steps that emit one message per input; if an adapter on the way stops emitting (a depth or page limit), set "allow_fanout_cycles: true": ${BOUNDED_BY}.`,
      );
    else
      add(
        'W506',
        at,
        `routes ${trip} send messages round in a cycle`,
        'Make sure an adapter on the way stops emitting (a depth or page limit); otherwise a message fails once it ' +
          'passes the max_lineage_depth setting.',
      );
  }
}

/**
 * The first step (as `routes[i].adapters[j] (type)`) that a message going round the cycle
 * through `members` passes and that may emit more than one message per input; undefined when
 * every such step is declared single-output. In each member route a message passes the steps
 * from the first up to the last that sends to a member.
 */
function fanOutStep(
  routes: readonly unknown[],
  members: ReadonlySet<string>,
  registry: AdapterRegistry,
): string | undefined {
  for (const [routeIndex, route] of routes.entries()) {
    if (!isRecord(route) || typeof route.id !== 'string' || !members.has(route.id)) continue;
    const steps = Array.isArray(route.adapters) ? route.adapters : [];
    let last = -1;
    steps.forEach((step, stepIndex) => {
      if (isRecord(step) && typeof step.destination === 'string' && members.has(step.destination))
        last = stepIndex;
    });
    for (let stepIndex = 0; stepIndex <= last; stepIndex++) {
      const step = steps[stepIndex];
      if (!emitsOnePerInput(step, registry))
        return `routes[${routeIndex}].adapters[${stepIndex}] (${String((step as { type?: unknown }).type)})`;
    }
  }
  return undefined;
}

/**
 * Whether a step emits at most one message per input (AdapterDefinition.singleOutput; a terminal
 * adapter emits none). A step that other rules already refuse (unknown type, invalid config)
 * counts as one, so it is not reported twice.
 */
function emitsOnePerInput(step: unknown, registry: AdapterRegistry): boolean {
  if (!isRecord(step) || typeof step.type !== 'string') return true;
  const definition = registry.get(step.type);
  if (!definition) return true;
  if (definition.terminal) return true;
  const declared = definition.singleOutput;
  if (typeof declared !== 'function') return declared === true;
  const check = registry.checkConfig(definition, step.config ?? {});
  return !check.valid || declared(check.config as never);
}

/** Tarjan's algorithm; each group lists its routes in document order. */
function stronglyConnected(edges: Map<string, Edge[]>): string[][] {
  const order = [...edges.keys()];
  const position = new Map(order.map((id, index) => [id, index]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const { to } of edges.get(node) ?? []) {
      if (!edges.has(to)) continue; // E204 reports unknown destinations
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) as number, low.get(to) as number));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node) as number, index.get(to) as number));
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      groups.push(group.sort((a, b) => (position.get(a) as number) - (position.get(b) as number)));
    }
  };
  for (const node of order) if (!index.has(node)) visit(node);
  return groups.sort(
    (a, b) => (position.get(a[0] as string) as number) - (position.get(b[0] as string) as number),
  );
}

/** The shortest way from `start` back to itself inside `members` (breadth first). */
function roundTrip(start: string, members: ReadonlySet<string>, edges: Map<string, Edge[]>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    for (const { to } of edges.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let at = node; at !== start; at = previous.get(at) as string) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start]; // unreachable for a group of two or more
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
