/**
 * Organizations (docs/organizations.md): roles, members, invitations, and the membership
 * lookup every organization route's `orgRole` uses.
 */
import { defineModule } from '../runtime/module.js';
import { accountModule } from '../account/module.js';
import { mailModule } from '../mail/module.js';
import { NOTIFICATION_KINDS_KEY } from '../notifications/kinds.js';
import { notificationsModule } from '../notifications/module.js';
import { membershipResolver } from './data.js';
import { InvitationService } from './invitations.js';
import { MemberService } from './members-service.js';
import { OrganizationShaping } from './organization-shaping.js';
import { orgQueries } from './queries.js';
import { orgRoutes } from './routes.js';
import { ORG_SCHEMAS } from './schemas.js';
import { OrganizationService } from './service.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { ORGS_MESSAGES } from './messages/index.js';

export { OrgId } from './schemas.js';
export { personalOrganization, refusePersonal } from './data.js';

/** Work that must happen before organizations are deleted (billing cancels their subscriptions). */
export type BeforeDeletion = (organizationIds: readonly string[]) => Promise<void>;

export const orgsModule = defineModule({
  name: 'orgs',
  declares: {
    [MESSAGES_KEY]: [ORGS_MESSAGES],
    [NOTIFICATION_KINDS_KEY]: [
      { kind: 'invitation-received', category: 'organizations', description: 'an invitation to an organization (in the app; its email is always sent)' },
      { kind: 'member-joined', category: 'organizations', description: 'someone joined the organization (to its owners and admins)' },
      { kind: 'member-left', category: 'organizations', description: 'a member left or was removed (to its owners and admins)' },
      { kind: 'member-role-changed', category: 'organizations', description: "a member's role changed (to its owners and admins)" },
    ],
  },
  start(ctx) {
    const log = ctx.logs.logger('saas.orgs');
    const hooks: BeforeDeletion[] = [];
    const beforeDeletion: BeforeDeletion = async (ids) => {
      for (const hook of hooks) await hook(ids);
    };
    // the logo's and the members' avatars' links: plugged by the files module, which starts later
    const shaping = new OrganizationShaping();
    const organizations = new OrganizationService(ctx.db, log, shaping, beforeDeletion);
    const members = new MemberService(ctx.db, log, shaping, ctx.use(notificationsModule).notifications);
    // an account's deletion deletes the organizations it alone owns: the same hooks run first
    ctx.use(accountModule).onBeforeOrganizationsDeleted(beforeDeletion);
    const invitations = new InvitationService({
      db: ctx.db,
      mail: ctx.use(mailModule).mail,
      notifications: ctx.use(notificationsModule).notifications,
      log,
      shaping,
    });
    const memberships = membershipResolver(ctx.db);
    return {
      services: {
        organizations,
        members,
        invitations,
        memberships,
        shaping,
        onBeforeDeletion(hook: BeforeDeletion): void {
          hooks.push(hook);
        },
      },
      schemas: ORG_SCHEMAS,
      routeGroups: [orgRoutes(organizations, members, invitations, memberships)],
      queries: orgQueries(organizations, members),
    };
  },
});
