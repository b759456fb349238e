/** Query kinds of the account module. */
import { Type } from 'typebox';
import { unauthorized } from '../http/errors.js';
import { queryKind } from '../http/queries.js';
import { UserAccount } from './schemas.js';
import type { AccountService } from './service.js';

export function accountQueries(accounts: AccountService) {
  return [
    queryKind({
      kind: 'account/me',
      scopes: ['account:read'],
      summary: 'The current account',
      auth: 'required',
      params: Type.Object({}, { additionalProperties: false }),
      result: UserAccount,
      async run({ user }) {
        const account = user && (await accounts.get(user));
        if (!account) throw unauthorized('Account no longer exists');
        return account;
      },
    }),
  ];
}
