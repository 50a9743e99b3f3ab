// Test-only: a broker's /metrics read as Prometheus reads it — fetched over HTTP and parsed
// (exposition-parser.ts) — with a sample that must be there, and a bounded wait until a scrape satisfies a
// condition whose failure shows the last scrape's samples of interest.

import assert from "node:assert/strict";
import { type ParsedFamily, parseExposition, sampleValue } from "../server/metrics/exposition-parser.js";
import { waitFor } from "./broker-harness.js";

export type Scrape = Map<string, ParsedFamily>;

export async function scrapeMetrics(url: string): Promise<Scrape> {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  return parseExposition(await res.text());
}

/** The sample's value; fails when the scrape has no such sample. */
export function requireSample(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  const v = sampleValue(s, name, labels);
  assert.notEqual(v, undefined, `no sample ${name} ${JSON.stringify(labels)}`);
  return v as number;
}

/**
 * Scrapes `url` until `check` holds (within `ms`); on a timeout the error lists the last scrape's samples
 * of the families whose name matches `shown`.
 */
export async function waitForScrape(
  url: string,
  what: string,
  check: (s: Scrape) => boolean,
  shown: RegExp,
  ms = 20_000,
): Promise<Scrape> {
  let last: Scrape | undefined;
  return waitFor(what, ms, async () => {
    last = await scrapeMetrics(url);
    return check(last) ? last : undefined;
  }).catch((e) => {
    const lines = [...(last?.values() ?? [])]
      .filter((f) => shown.test(f.name))
      .flatMap((f) => f.samples.map((x) => `${x.name}${JSON.stringify(x.labels)} ${x.value}`));
    throw new Error(`${(e as Error).message}\nlast scrape:\n${lines.join("\n")}`);
  });
}
