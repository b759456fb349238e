import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ANSWERED, requestSteps, type RequestStep, type StepResult } from '../../src/http/request-steps.js';

/** Runs the steps as Fastify runs the hook: resolves with what `done` got (undefined: go on), or 'stopped'. */
function run(steps: RequestStep[]): Promise<Error | undefined | 'stopped'> {
  const hook = requestSteps(steps) as unknown as (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;
  return new Promise((resolve) => {
    hook({} as FastifyRequest, {} as FastifyReply, (err?: Error) => resolve(err));
    setTimeout(() => resolve('stopped'), 50);
  });
}

describe('request steps (the one onRequest hook)', () => {
  it('runs every step in order and goes on', async () => {
    const seen: number[] = [];
    const result = await run([() => void seen.push(1), async () => void seen.push(2), () => void seen.push(3)]);
    assert.equal(result, undefined);
    assert.deepEqual(seen, [1, 2, 3]);
  });

  it('stops at an error, synchronous or after a wait, and runs nothing after it', async () => {
    const seen: number[] = [];
    const refused = new Error('refused');
    assert.equal(await run([() => refused, () => void seen.push(1)]), refused);
    assert.equal(await run([async () => refused, () => void seen.push(2)]), refused);
    assert.deepEqual(seen, []);
  });

  it('stops without calling done when a step answered itself', async () => {
    const seen: number[] = [];
    assert.equal(await run([() => ANSWERED, () => void seen.push(1)]), 'stopped');
    assert.equal(await run([async (): Promise<StepResult> => ANSWERED, () => void seen.push(2)]), 'stopped');
    assert.deepEqual(seen, []);
  });

  it('fails the request, not the process, when a step rejects or a later one throws after a wait', async () => {
    const broken = new Error('lookup failed');
    assert.equal(await run([() => Promise.reject(broken)]), broken);
    const thrown = new Error('thrown after the wait');
    assert.equal(
      await run([
        async () => undefined,
        () => {
          throw thrown;
        },
      ]),
      thrown,
    );
  });
});
