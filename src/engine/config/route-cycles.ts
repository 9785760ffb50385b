/**
 * Cycles of two or more routes joined by `destination:` (a stage sending back into its own
 * route is W505, not a cycle here). Each strongly connected group of routes is reported once,
 * with one concrete round trip and the first step, in document order, that leaves on it.
 */

export interface RouteCycle {
  /** Route ids of the round trip, the first repeated at the end: `a -> b -> a`. */
  path: string[];
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
    cycles.push({ path: trip, routeIndex: first.routeIndex, stepIndex: first.stepIndex });
  }
  return cycles;
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
