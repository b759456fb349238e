/**
 * A member the directory suspends or removes grants nothing through what it sent (issue 37,
 * item 4): its pending invitations are revoked in the suspension's (or removal's) transaction,
 * and accepting an invitation whose inviter is suspended or gone is refused whenever it was sent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../../src/auth/refresh-tokens.js';
import { account, as, mailedToken, type TestAccount } from '../orgs/support.js';
import { uniqueEmail } from '../support/auth.js';
import { testDatabases, type TestSystem } from '../support/system.js';
import { PATCH, startDirectory, USER, type Directory } from './support.js';

for (const db of testDatabases()) {
  describe(`Invitations of a member the directory suspends, on ${db.name}`, () => {
    let directory: Directory;
    let t: TestSystem;
    let owner: TestAccount;
    let orgId: string;
    let domain: string;

    before(async () => {
      directory = await startDirectory(db);
      ({ t, owner, orgId, domain } = directory);
    });
    after(async () => {
      await directory?.stop();
    });

    const scim = (method: string, path: string, body?: unknown) => directory.scim(method, path, body);
    const active = (id: string, value: boolean) =>
      scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: value } }] });
    /** an account of the domain, provisioned by the directory, then made an admin by the owner */
    const directoryAdmin = async () => {
      const person = await account(t, { email: `admin-${Math.random().toString(36).slice(2, 10)}@${domain}` });
      assert.equal((await scim('POST', '/Users', { schemas: [USER], userName: person.email, active: true })).status, 201);
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${orgId}/members/${person.id}`, { role: 'admin' })).status, 200);
      return person;
    };
    const invite = async (by: TestAccount, role: 'admin' | 'member') => {
      const email = uniqueEmail('second-address');
      const res = await as(t, by, 'POST', `/api/orgs/${orgId}/invitations`, { email, role });
      assert.equal(res.status, 201, res.text);
      const token = await mailedToken(t, email, 'invitation');
      return { id: res.body.id as string, token, invitee: await account(t, { email }) };
    };
    const accept = (who: TestAccount, token: string) => as(t, who, 'POST', '/api/invitations/accept', { token });
    const pending = async () => ((await as(t, owner, 'GET', `/api/orgs/${orgId}/invitations`)).body.invitations as Array<{ id: string }>).map((i) => i.id);

    it("revokes a suspended member's invitations with the suspension: its second address does not come back as admin", async () => {
      const admin = await directoryAdmin();
      const asAdmin = await invite(admin, 'admin');
      const asMember = await invite(admin, 'member');
      const byOwner = await invite(owner, 'member');
      assert.equal((await active(admin.id, false)).status, 200);
      assert.deepEqual(await pending(), [byOwner.id], "only the owner's invitation is pending");
      for (const sent of [asAdmin, asMember]) {
        const refused = await accept(sent.invitee, sent.token);
        assert.deepEqual([refused.status, refused.body.type], [400, 'invalid-token'], refused.text);
      }
      const entries = await t.system.database.db
        .selectFrom('audit_entry')
        .select(['target_id', 'details', 'actor_account_id'])
        .where('action', '=', 'org.invitation-revoked')
        .where('target_id', 'in', [asAdmin.id, asMember.id])
        .execute();
      assert.deepEqual(
        entries.map((e) => [e.details.reason, e.details['invited-by'], e.actor_account_id]),
        [
          ['inviter-suspended', admin.id, null],
          ['inviter-suspended', admin.id, null],
        ],
      );
      // reactivation gives back the membership, not what was revoked
      assert.equal((await active(admin.id, true)).status, 200);
      assert.equal((await accept(asAdmin.invitee, asAdmin.token)).status, 400);
      assert.equal((await accept(byOwner.invitee, byOwner.token)).status, 200, "the owner's invitation stands");
    });

    it("refuses an invitation whose inviter is suspended however it came to be pending, and revokes on the directory's removal", async () => {
      const admin = await directoryAdmin();
      assert.equal((await active(admin.id, false)).status, 200);
      // pending although its inviter is suspended (written as one made before the rule would be)
      const email = uniqueEmail('old-invitation');
      const invitee = await account(t, { email });
      await t.system.database.db
        .insertInto('invitation')
        .values({
          organization_id: orgId,
          email,
          role: 'admin',
          token_hash: hashToken('sent-before-the-rule'),
          invited_by: admin.id,
          expires_at: new Date(Date.now() + 3_600_000),
        })
        .execute();
      const refused = await accept(invitee, 'sent-before-the-rule');
      assert.deepEqual([refused.status, refused.body.type], [400, 'invalid-token'], refused.text);
      assert.ok(!(await as(t, invitee, 'GET', '/api/orgs')).body.organizations.some((o: { id: string }) => o.id === orgId), 'nothing granted');

      const leaver = await directoryAdmin();
      const sent = await invite(leaver, 'admin');
      assert.equal((await scim('DELETE', `/Users/${leaver.id}`)).status, 204);
      assert.ok(!(await pending()).includes(sent.id));
      assert.equal((await accept(sent.invitee, sent.token)).status, 400);
      const entry = await t.system.database.db
        .selectFrom('audit_entry')
        .select('details')
        .where('action', '=', 'org.invitation-revoked')
        .where('target_id', '=', sent.id)
        .executeTakeFirstOrThrow();
      assert.equal(entry.details.reason, 'inviter-removed');
    });
  });
}
