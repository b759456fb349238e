/**
 * The sign-up form's refusals against a fake transport: the server's field errors show beside
 * their fields (the confirmation that does not match the password, a taken email), the message as
 * a toast, and a new attempt clears them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transitJson } from '../../src/shared/codecs.js';
import { answer, fakeClient } from '../support/client-events.js';

const form = { name: 'Ada', email: 'ada@example.test', password: 'correct horse battery staple', 'confirm-password': 'correct horse battery stapler' };

describe('client sign-up', () => {
  it('puts the server field errors beside their fields, a taken email on the email field, and clears them on the next try', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    let attempt = 0;
    const { core, run } = fakeClient(
      'sign-up',
      (req) => {
        if (req.url !== '/api/account/sign-up') return undefined;
        bodies.push(transitJson.decode(req.body as string) as Record<string, unknown>);
        attempt++;
        if (attempt === 1)
          return answer(
            { type: 'request-coercion', message: 'Invalid request body', in: 'body', errors: [{ path: '/confirm-password', message: 'must equal password' }] },
            400,
          );
        return answer({ type: 'conflict', message: 'An account with this email already exists', field: 'email' }, 409);
      },
      { session: 'none' },
    );
    await run(['sign-up/submit', form]);
    assert.equal(bodies.length, 1);
    assert.deepEqual(core.state.fieldErrors?.['sign-up'], { 'confirm-password': 'must equal password' });
    assert.equal(core.state.busy, false);
    assert.ok(core.state.toasts.some((t) => t.message.startsWith('Invalid request body')));

    await run(['sign-up/submit', { ...form, 'confirm-password': form.password }]);
    assert.deepEqual(core.state.fieldErrors?.['sign-up'], { email: 'An account with this email already exists' }, 'the earlier error is gone');
  });
});
