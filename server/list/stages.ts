/**
 * Runs a stage list written as a generator (server/list/service.ts): a stage that may wait yields
 * its answer through `wait`, which hands it back at once unless it is a promise. A request whose
 * stages all answer at once (the SQLite ledger) finishes synchronously, without a promise: on the
 * repeated default page that measured faster than an async function (docs/performance.md).
 */
export type Stages<T> = Generator<unknown, T, never>;

/** A stage's answer, awaited only if it is a promise (`yield* wait(x)` is typed as x's value). */
export function* wait<T>(answer: T | Promise<T>): Generator<T | Promise<T>, T, T> {
  return yield answer;
}

/** The stages' result: at once while no stage answered with a promise, else a promise of it. */
export function drive<T>(stages: Stages<T>): T | Promise<T> {
  return resume(stages, stages.next());
}

function resume<T>(stages: Stages<T>, step: IteratorResult<unknown, T>): T | Promise<T> {
  while (!step.done) {
    const answer = step.value;
    if (answer instanceof Promise) {
      return answer.then(
        (value) => resume(stages, stages.next(value as never)),
        (err) => resume(stages, stages.throw(err)),
      );
    }
    step = stages.next(answer as never);
  }
  return step.value;
}
