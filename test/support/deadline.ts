// withDeadline: a promise or a rejection naming what did not finish in time, so a test that waits on a
// real client or broker fails with a clear message instead of hanging.

/** `p`, or a rejection naming `what` after `ms`. */
export async function withDeadline<T>(what: string, ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
