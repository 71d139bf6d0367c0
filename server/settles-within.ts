/** Resolves true when `done` settles within `ms` milliseconds, false otherwise (a bounded wait, as on shutdown). */
export function settlesWithin(done: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([done.then(() => true), late]).finally(() => clearTimeout(timer));
}
