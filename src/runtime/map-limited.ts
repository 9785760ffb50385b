/**
 * `map` over `items` with at most `limit` calls in flight, results in input order. For work
 * that waits on a round trip each (a broker receipt, a storage write), where one at a time
 * pays the round trip per item and all at once has no bound.
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  map: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await map(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}
