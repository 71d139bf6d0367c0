/**
 * Runs a stage list written as a generator (server/list/service.ts): a stage that may wait yields
 * its answer, and gets it back at once unless it is a promise. A request whose stages all answer
 * at once (the SQLite ledger) finishes synchronously; one whose ledger answers with promises
 * (Redis) resumes after each. On the repeated default page the same stages as an async function
 * cost 14 % more CPU a request (test/bench/RESULTS.md, "The list request's stages").
 */
export type Stages<T> = Generator<unknown, T, unknown>;

/** The stages' result: at once while no stage answered with a promise, else a promise of it. */
export function drive<T>(stages: Stages<T>): T | Promise<T> {
  return resume(stages, stages.next());
}

function resume<T>(stages: Stages<T>, step: IteratorResult<unknown, T>): T | Promise<T> {
  while (!step.done) {
    const answer = step.value;
    if (answer instanceof Promise) {
      return answer.then(
        (value) => resume(stages, stages.next(value)),
        (err) => resume(stages, stages.throw(err)),
      );
    }
    step = stages.next(answer);
  }
  return step.value;
}
