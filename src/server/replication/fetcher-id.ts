// Which of a leader's num.replica.fetchers fetchers a partition goes to, exactly as Kafka picks it
// (AbstractFetcherManager.getFetcherId): Utils.abs(31 * topic.hashCode() + partition) % numFetchers, in
// Java's 32-bit int arithmetic, with Java's String.hashCode over UTF-16 code units and Utils.abs mapping
// Integer.MIN_VALUE to 0. A mixed cluster of Kafka and Tributary brokers spreads partitions the same way.

/** Java's String.hashCode: s[0]*31^(n-1) + … + s[n-1], wrapping as a 32-bit int. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's Utils.abs: Math.abs, except Integer.MIN_VALUE → 0. */
function javaAbs(n: number): number {
  return n === -0x80000000 ? 0 : Math.abs(n);
}

export function getFetcherId(topic: string, partition: number, numFetchers: number): number {
  if (numFetchers <= 1) return 0;
  return javaAbs((Math.imul(31, javaStringHashCode(topic)) + partition) | 0) % numFetchers;
}
