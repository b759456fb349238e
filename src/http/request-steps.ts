/**
 * The checks every request goes through before its route's own (the pipeline's negotiation and
 * limits, the JWT middleware, the route gates, the CSRF check) run as steps of one `onRequest`
 * hook, in order: each hook Fastify runs costs its hook runner, a callback and a closure per
 * request, on every request (docs/performance.md, "Request cost, round 4").
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';

/** A step's answer: go on (undefined), stop with this error answer, or stop because the step answered itself. */
export const ANSWERED = Symbol('saas.answered');
export type StepResult = Error | undefined | typeof ANSWERED;

/** One check; a promise only when it has to wait (a token verified for the first time, a platform-admin lookup). */
export type RequestStep = (request: FastifyRequest, reply: FastifyReply) => StepResult | Promise<StepResult>;

/** The steps as one hook: the next runs only when the one before went on. */
export function requestSteps(steps: readonly RequestStep[]): onRequestHookHandler {
  const run = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void, from: number): void => {
    for (let i = from; i < steps.length; i++) {
      const result = steps[i](request, reply);
      if (result === undefined) continue;
      if (result instanceof Promise) {
        result.then((settled) => {
          // a step that throws after the wait fails the request, not the process
          try {
            if (settled === undefined) run(request, reply, done, i + 1);
            else if (settled !== ANSWERED) done(settled);
          } catch (err) {
            done(err as Error);
          }
        }, done);
        return;
      }
      if (result !== ANSWERED) done(result);
      return;
    }
    done();
  };
  return (request, reply, done) => run(request, reply, done, 0);
}
