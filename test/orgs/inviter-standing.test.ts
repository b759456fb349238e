/**
 * An invitation is only as good as its sender's standing (issue 25, items 3-5): a removed,
 * departed, demoted or deleted admin's pending invitations are revoked in the change's own
 * transaction (and checked again at accept time); a personal organization takes no invitations
 * and no role changes; an ex-member's export does not resolve its former co-members' addresses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../../src/auth/refresh-tokens.js';
import { PASSWORD, uniqueEmail } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, addMember, as, createOrg, mailedToken, type TestAccount } from './support.js';

for (const db of testDatabases()) {
  describe(`Inviter standing on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db);
    });
    after(async () => t?.stop());

    /** `by` invites a fresh address with `role`; answers the invitee (verified, not yet a member) and the link's token. */
    const invite = async (orgId: string, by: TestAccount, role: 'owner' | 'admin' | 'member') => {
      const email = uniqueEmail('invitee');
      const res = await as(t, by, 'POST', `/api/orgs/${orgId}/invitations`, { email, role });
      assert.equal(res.status, 201, res.text);
      const token = await mailedToken(t, email, 'invitation');
      return { invitee: await account(t, { email }), token, id: res.body.id as string };
    };
    const accept = (who: TestAccount, token: string) => as(t, who, 'POST', '/api/invitations/accept', { token });
    const pending = async (orgId: string, owner: TestAccount) =>
      ((await as(t, owner, 'GET', `/api/orgs/${orgId}/invitations`)).body.invitations as Array<{ id: string }>).map((i) => i.id).sort();

    it("revokes a removed admin's pending invitations with the removal: its second address cannot come back as admin", async () => {
      const owner = await account(t);
      const admin = await account(t);
      const orgId = await createOrg(t, owner);
      await addMember(t, orgId, owner, admin, 'admin');
      const byAdmin = await invite(orgId, admin, 'admin');
      const byOwner = await invite(orgId, owner, 'member');
      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${orgId}/members/${admin.id}`)).status, 204);
      assert.deepEqual(await pending(orgId, owner), [byOwner.id], "only the remaining members' invitations are pending");
      const refused = await accept(byAdmin.invitee, byAdmin.token);
      assert.deepEqual([refused.status, refused.body.type], [400, 'invalid-token']);
      assert.equal((await accept(byOwner.invitee, byOwner.token)).status, 200, "the owner's invitation stands");
      const entry = await t.system.database.db
        .selectFrom('audit_entry')
        .select(['details', 'actor_account_id'])
        .where('action', '=', 'org.invitation-revoked')
        .where('target_id', '=', byAdmin.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual([entry.details.reason, entry.details['invited-by'], entry.actor_account_id], ['inviter-removed', admin.id, owner.id]);
    });

    it('revokes what a demoted member may no longer grant, and what one that left sent', async () => {
      const owner = await account(t);
      const coOwner = await account(t);
      const admin = await account(t);
      const orgId = await createOrg(t, owner);
      await addMember(t, orgId, owner, coOwner, 'owner');
      await addMember(t, orgId, owner, admin, 'admin');
      const ownerGrant = await invite(orgId, coOwner, 'owner');
      const adminGrant = await invite(orgId, coOwner, 'admin');
      // owner -> admin: its owner invitation goes, its admin invitation stays
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${orgId}/members/${coOwner.id}`, { role: 'admin' })).status, 200);
      assert.deepEqual(await pending(orgId, owner), [adminGrant.id]);
      assert.equal((await accept(ownerGrant.invitee, ownerGrant.token)).status, 400);
      // admin -> member: nothing is left it may grant
      const memberGrant = await invite(orgId, admin, 'member');
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${orgId}/members/${admin.id}`, { role: 'member' })).status, 200);
      assert.deepEqual((await pending(orgId, owner)).includes(memberGrant.id), false);
      assert.equal((await accept(memberGrant.invitee, memberGrant.token)).status, 400);
      // one that leaves takes its invitations along
      assert.equal((await as(t, coOwner, 'DELETE', `/api/orgs/${orgId}/members/${coOwner.id}`)).status, 204);
      assert.equal((await accept(adminGrant.invitee, adminGrant.token)).status, 400);
    });

    it("checks the inviter's standing at accept time, and revokes a deleted account's invitations", async () => {
      const owner = await account(t);
      const admin = await account(t);
      const orgId = await createOrg(t, owner);
      await addMember(t, orgId, owner, admin, 'admin');
      const sent = await invite(orgId, admin, 'admin');
      // a demotion written by hand (as one made before the rule would be): the accept still refuses
      await t.system.database.db
        .updateTable('membership')
        .set({ role: 'member' })
        .where('organization_id', '=', orgId)
        .where('account_id', '=', admin.id)
        .execute();
      assert.equal((await accept(sent.invitee, sent.token)).status, 400);
      await t.system.database.db
        .updateTable('membership')
        .set({ role: 'admin' })
        .where('organization_id', '=', orgId)
        .where('account_id', '=', admin.id)
        .execute();
      assert.equal((await as(t, admin, 'POST', '/api/account/delete', { password: PASSWORD })).status, 204);
      assert.deepEqual(await pending(orgId, owner), []);
      assert.equal((await accept(sent.invitee, sent.token)).status, 400);
    });

    it('refuses invitations and role changes on a personal organization (409)', async () => {
      const owner = await account(t);
      const other = await account(t);
      const orgs = (await as(t, owner, 'GET', '/api/orgs')).body.organizations as Array<{ id: string; personal: boolean }>;
      const personal = orgs.find((o) => o.personal)!.id;
      const invited = await as(t, owner, 'POST', `/api/orgs/${personal}/invitations`, { email: other.email, role: 'admin' });
      assert.deepEqual([invited.status, invited.body.type, invited.body.reason], [409, 'conflict', 'personal'], invited.text);
      const role = await as(t, owner, 'PATCH', `/api/orgs/${personal}/members/${owner.id}`, { role: 'admin' });
      assert.deepEqual([role.status, role.body.reason], [409, 'personal'], role.text);
      // an invitation written before the rule: accepting it is refused the same way
      const token = 'an-old-personal-invitation';
      await t.system.database.db
        .insertInto('invitation')
        .values({
          organization_id: personal,
          email: other.email,
          role: 'admin',
          token_hash: hashToken(token),
          invited_by: owner.id,
          expires_at: new Date(Date.now() + 3_600_000),
        })
        .execute();
      const accepted = await accept(other, token);
      assert.deepEqual([accepted.status, accepted.body.reason], [409, 'personal']);
      assert.equal((await as(t, other, 'GET', `/api/orgs/${personal}/audit-log`)).status, 404, "its log stays the owner's");
    });

    it('resolves emails in an export only in the organizations the account still belongs to', async () => {
      const owner = await account(t);
      const admin = await account(t);
      const orgId = await createOrg(t, owner);
      await addMember(t, orgId, owner, admin, 'admin');
      const member = await account(t);
      await addMember(t, orgId, admin, member, 'member');
      assert.equal((await as(t, admin, 'PATCH', `/api/orgs/${orgId}/members/${member.id}`, { role: 'admin' })).status, 200);
      const targetEmail = async () => {
        const exported = (await as(t, admin, 'GET', '/api/account/export')).body['audit-log'] as Array<{ action: string; target: { email?: string } | null }>;
        return exported.find((e) => e.action === 'org.member-role-changed')?.target;
      };
      assert.equal((await targetEmail())?.email, member.email, "a member sees its co-member's address");
      assert.equal((await as(t, admin, 'DELETE', `/api/orgs/${orgId}/members/${admin.id}`)).status, 204);
      const after = await targetEmail();
      assert.ok(after, 'the entry is still in its export');
      assert.equal(after.email, undefined, 'an ex-member learns no current address');
    });
  });
}
