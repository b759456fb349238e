/**
 * The product's own sign-in and consent for the provider (docs/oauth.md): the provider sends the
 * browser to `APP_URL/authorize/<uid>`; that page signs the person in with the product's sign-in
 * (every rule holds: two-factor, SSO enforcement, locked accounts) and calls these with the
 * session's own token. Allow signs the interaction in as the caller (its session's `auth_time`)
 * and grants the asked scopes; Deny ends it with `access_denied`. Consent is remembered in the
 * account's live grant to the app: asking nothing beyond it needs no new Allow.
 */
import { appendAccountAudit, type ClientOrigin } from '../audit/log.js';
import type { DB } from '../db/database.js';
import { notFound } from '../http/errors.js';
import type { AuthUser } from '../http/routes.js';
import { OIDC_SCOPES } from '../shared/oauth-scopes.js';
import type { Grants } from './grants.js';
import type { OAuthProvider } from './provider.js';
import type { OAuthConsentResult, OAuthInteraction } from './schemas.js';

const epoch = () => Math.floor(Date.now() / 1000);

/** The provider's cookie naming the sign-in request its browser started (path `/`: provider.ts). */
export const INTERACTION_COOKIE = '_interaction';

export interface InteractionDeps {
  db: DB;
  provider: OAuthProvider;
  grants: Grants;
  resource: string;
  /** the API scopes: the built-in ones and those modules declare */
  apiScopes: readonly string[];
  /** counts a grant made by an Allow */
  granted(): void;
}

export class Interactions {
  constructor(private readonly deps: InteractionDeps) {}

  /**
   * The pending request, when `browserUid` (the caller's interaction cookie) names it: a request
   * is answered only from the browser that started it, so a link to someone else's consent page
   * signs nobody into a stranger's browser.
   */
  private async load(uid: string, browserUid: string | undefined) {
    const interaction = browserUid === uid ? await (await this.deps.provider.current()).Interaction.find(uid) : undefined;
    if (!interaction || interaction.result)
      throw notFound('No such sign-in request in this browser: it is unknown, finished, expired, or was started elsewhere', { uid });
    const clientId = String(interaction.params.client_id ?? '');
    const scopes = String(interaction.params.scope ?? '')
      .split(' ')
      .filter(Boolean);
    return { interaction, clientId, scopes };
  }

  async details(user: AuthUser, uid: string, browserUid: string | undefined): Promise<OAuthInteraction> {
    const { interaction, clientId, scopes } = await this.load(uid, browserUid);
    const client = await (await this.deps.provider.current()).Client.find(clientId);
    if (!client) throw notFound('No such sign-in request: its app no longer exists', { uid });
    const organization = await this.deps.db
      .selectFrom('oauth_app as a')
      .innerJoin('organization as o', 'o.id', 'a.organization_id')
      .select(['o.id', 'o.name'])
      .where('a.client_id', '=', clientId)
      .executeTakeFirst();
    const asked = String(interaction.params.prompt ?? '').split(' ');
    const live = await this.deps.grants.live(user.id, clientId);
    const covered = live !== undefined && scopes.every((s) => live.scopes.includes(s));
    return {
      uid,
      client: { 'client-id': clientId, name: client.clientName ?? clientId, organization: organization ?? null },
      scopes,
      'consent-required': asked.includes('consent') || !covered,
    };
  }

  async consent(user: AuthUser, uid: string, browserUid: string | undefined, allow: boolean, origin: ClientOrigin): Promise<OAuthConsentResult> {
    const { interaction, clientId, scopes } = await this.load(uid, browserUid);
    if (!allow) {
      interaction.result = { error: 'access_denied', error_description: 'The person declined the request' };
      await interaction.save(Math.max(1, (interaction.exp ?? epoch() + 60) - epoch()));
      return { 'redirect-to': interaction.returnTo };
    }
    const { Grant } = await this.deps.provider.current();
    const live = await this.deps.grants.live(user.id, clientId);
    const grant = (live && (await Grant.find(live.id))) || new Grant({ accountId: user.id, clientId });
    // every known scope is the provider's (so the app's registration bounds it); API scopes are also the resource's
    const known = scopes.filter((s) => (OIDC_SCOPES as readonly string[]).includes(s) || this.deps.apiScopes.includes(s));
    const api = scopes.filter((s) => this.deps.apiScopes.includes(s));
    if (known.length > 0) grant.addOIDCScope(known.join(' '));
    if (api.length > 0) grant.addResourceScope(this.deps.resource, api.join(' '));
    const grantId = await grant.save();
    interaction.result = { login: { accountId: user.id, ...(user.authTime ? { ts: user.authTime } : {}) }, consent: { grantId } };
    await interaction.save(Math.max(1, (interaction.exp ?? epoch() + 60) - epoch()));
    await appendAccountAudit(this.deps.db, {
      action: 'oauth-grant.created',
      accountId: user.id,
      target: { type: 'oauth-grant', id: grantId },
      details: { 'client-id': clientId, scopes: scopes.join(' ') },
      origin,
    });
    if (!live) this.deps.granted();
    return { 'redirect-to': interaction.returnTo };
  }
}
