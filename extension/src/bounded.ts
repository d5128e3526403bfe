// Every wait of the extension has a bound and a name (issue 26 §2: no silent stall). A promise
// that may never settle — a frame whose page is blocked, a debugger command to a tab Chrome does
// not draw, a request over a stalled connection — is raced against a timer, and past it the
// caller gets an error that says what was waited for. The work itself is left to end on its own.

/** `work`, or the error `failure()` makes once `ms` have passed without it settling. */
export async function bounded<T>(work: Promise<T>, ms: number, failure: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(failure()), ms)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `error` is a request's own timeout (`AbortSignal.timeout`). */
export function timedOut(error: unknown): boolean {
  return error instanceof DOMException && error.name === "TimeoutError";
}
