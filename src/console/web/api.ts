// The front end's access to the console's JSON API and its Server-Sent Events: useApi() fetches a path
// and refetches it after every collector sample of the page's cluster (so pages update without a
// reload) or on reload(); postJson() for actions; useMe() for who is logged in; formatting helpers.

import { useEffect, useState } from "preact/hooks";

export interface ApiState<T> {
  readonly data: T | undefined;
  readonly error: string | undefined;
  /** How many times data arrived: the pages expose it for tests as data-version. */
  readonly version: number;
  /** Fetches again now (after an action). */
  readonly reload: () => void;
}

/** POSTs JSON; resolves with the answer's JSON, rejects with the server's one-line error. */
export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(answer?.error ?? `${res.status} ${res.statusText}`);
  return answer as T;
}

export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: "application/json" } });
  const body = await res.json();
  if (!res.ok) throw new Error(body?.error ?? `${res.status} ${res.statusText}`);
  return body as T;
}

type SampleListener = (e: { cluster: string; ts: number }) => void;
const listeners = new Set<SampleListener>();
let source: EventSource | undefined;

function subscribe(l: SampleListener): () => void {
  listeners.add(l);
  if (!source) {
    source = new EventSource("/api/events");
    source.addEventListener("sample", (ev) => {
      const data = JSON.parse((ev as MessageEvent<string>).data);
      for (const x of [...listeners]) x(data);
    });
  }
  return () => listeners.delete(l);
}

/** GETs `path` now and after each sample of `cluster` (when given). */
export function useApi<T>(path: string, cluster?: string): ApiState<T> {
  const [state, setState] = useState<Omit<ApiState<T>, "reload">>({
    data: undefined,
    error: undefined,
    version: 0,
  });
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    let live = true;
    let inFlight = false;
    let again = false;
    const load = async (): Promise<void> => {
      if (inFlight) {
        again = true;
        return;
      }
      inFlight = true;
      try {
        const data = await getJson<T>(path);
        if (live) setState((s) => ({ data, error: undefined, version: s.version + 1 }));
      } catch (e) {
        if (live) setState((s) => ({ ...s, error: (e as Error).message }));
      } finally {
        inFlight = false;
        if (again && live) {
          again = false;
          void load();
        }
      }
    };
    if (nonce === 0) setState({ data: undefined, error: undefined, version: 0 });
    void load();
    const off = cluster === undefined ? () => {} : subscribe((e) => e.cluster === cluster && void load());
    return () => {
      live = false;
      off();
    };
  }, [path, cluster, nonce]);
  return { ...state, reload: () => setNonce((n) => n + 1) };
}

export const fmt = (n: number): string => n.toLocaleString("en-US");

/** 1536 → "1.5 KiB"; negative (not reported) → "–". */
export function bytes(n: number): string {
  if (n < 0) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** 3725000 ms → "1h 2m 5s", 3605000 → "1h 0m 5s" (at most three units); null → "unknown". */
export function age(ms: number | null): string {
  if (ms === null) return "unknown";
  let s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
  ] as const) {
    if (s >= size || parts.length > 0) {
      parts.push(`${Math.floor(s / size)}${unit}`);
      s %= size;
    }
  }
  if (parts.length < 3) parts.push(`${s}s`);
  return parts.join(" ");
}

/**
 * A group's oldest unconsumed record over all its partitions: "≥ 4m 1s" when some lagging partitions'
 * records could not be read (the age shown is the oldest of the rest), with a title saying how many.
 */
export function groupAge(maxLagMs: number | null, unknown: number): { text: string; title: string } {
  if (unknown === 0 || maxLagMs === null)
    return { text: age(maxLagMs), title: unknown === 0 ? "" : "no lagging partition's record could be read" };
  return {
    text: `≥ ${age(maxLagMs)}`,
    title: `the record of ${unknown} lagging partition${unknown === 1 ? "" : "s"} could not be read: at least this old`,
  };
}

export const enc = encodeURIComponent;

export interface Me {
  usersConfigured: boolean;
  user: string | null;
  role: "admin" | "read-only" | null;
}

const meListeners = new Set<(m: Me) => void>();
let me: Me | undefined;

/** Sets who is logged in (after login/logout) for every component using useMe(). */
export function setMe(m: Me): void {
  me = m;
  for (const l of [...meListeners]) l(m);
}

/** Who is logged in; undefined until known. */
export function useMe(): Me | undefined {
  const [state, setState] = useState<Me | undefined>(me);
  useEffect(() => {
    meListeners.add(setState);
    if (me === undefined) void getJson<Me>("/api/me").then(setMe, () => {});
    return () => {
      meListeners.delete(setState);
    };
  }, []);
  return state;
}
