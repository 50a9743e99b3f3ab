// mapConcurrent: a bounded number of promises in flight over a list, results in input order (the
// controller's pipelined ZooKeeper requests, the ACL and change-notification readers, a batch of new logs'
// fsyncs).

/** Runs `fn` over `items` with at most `limit` in flight; results in input order. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
