/**
 * A stage list written once as a generator: each stage that may wait yields its value, and the
 * list runs straight through while no value is a promise (the in-process ledger), so the request
 * finishes synchronously, and continues asynchronously from the first promise (Redis).
 */
import type { Maybe } from "../limits/counters.ts";

export type Stages<T> = Generator<unknown, T, unknown>;

/** `const v = yield* settled(x)`: v is x, or what x resolves to. */
export function* settled<T>(value: Maybe<T>): Generator<Maybe<T>, T, unknown> {
  return (yield value) as T;
}

/** Runs the stages: synchronously until one yields a promise, then on its settlement. */
export function runStages<T>(stages: Stages<T>, step = stages.next()): Maybe<T> {
  for (;;) {
    if (step.done) return step.value;
    if (step.value instanceof Promise) {
      return step.value.then(
        (v) => runStages(stages, stages.next(v)),
        (err) => runStages(stages, stages.throw(err)),
      );
    }
    step = stages.next(step.value);
  }
}
