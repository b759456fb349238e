/**
 * The product's own sign-in and consent for the provider (docs/oauth.md): the provider sends the
 * browser to `APP_URL/authorize/<uid>`; that page signs the person in with the product's sign-in
 * (every rule holds: two-factor, SSO enforcement, locked accounts) and calls these with the
 * session's own token. Allow signs the interaction in as the caller (its session's `auth_time`,
 * and the session itself, which the provider's session is then bound to: session-binding.ts) and
 * grants the asked scopes; Deny ends it with `access_denied`. Consent is remembered in the
 * account's live grant to the app: asking nothing beyond it needs no new Allow.
 *
 * A grant is a lasting credential: one that adds `offline_access` or a write scope needs a recent
 * sign-in (route data `reauth`, with {@link Interactions.needsReauthentication}), ends with the
 * session that consented (and with a password change), and is told to the person by email. An app
 * asking a fresh sign-in (`prompt=login`, `max_age`) gets one: the password again, or for an
 * account without one, a sign-in since the request began (or within `max_age`).
 */
import { appendAccountAudit, type ClientOrigin } from '../audit/log.js';
import type { DB } from '../db/database.js';
import { HttpError, notFound, unauthorized } from '../http/errors.js';
import type { AuthUser } from '../http/routes.js';
import type { NotificationService } from '../notifications/service.js';
import { OIDC_SCOPES } from '../shared/oauth-scopes.js';
import { SESSION_ENDED } from '../auth/access-tokens.js';
import { metadataDocumentHost } from './client-metadata.js';
import { signedInteraction, type ProviderCookies } from './cookies.js';
import type { Grants } from './grants.js';
import type { OAuthProvider } from './provider.js';
import type { OAuthConsentResult, OAuthInteraction } from './schemas.js';
import { SIGNED_IN_SESSION } from './session-binding.js';
import { phrase } from '../i18n/messages.js';

const epoch = () => Math.floor(Date.now() / 1000);

/** A request's cookies, by name. */
export type CookieJar = Record<string, string | undefined> | undefined;

/**
 * 403 `reauthentication-required` for an app that asked a fresh sign-in (`prompt=login`,
 * `max_age`) of an account that has no password to give: only signing in again does.
 */
function freshSignInRequired(): HttpError {
  return new HttpError(403, {
    type: 'reauthentication-required',
    message: 'The app asks for a fresh sign-in: sign in again, then allow it',
    method: 'recent-sign-in',
  });
}

/** Scopes whose grant lasts or writes: consenting to them needs a recent sign-in. */
const lasting = (scope: string) => scope === 'offline_access' || scope.endsWith(':write');

export interface InteractionDeps {
  db: DB;
  provider: OAuthProvider;
  grants: Grants;
  notifications: Pick<NotificationService, 'notify'>;
  cookies: ProviderCookies;
  /** the resources tokens may be for (RFC 8707), the API's first: the one granted when the request names none */
  resources: readonly string[];
  /** the API scopes: the built-in ones and those modules declare */
  apiScopes: readonly string[];
  /** counts a grant made by an Allow */
  granted(): void;
}

export class Interactions {
  constructor(private readonly deps: InteractionDeps) {}

  /**
   * The pending request, when the caller's signed interaction cookie names it: a request is
   * answered only from the browser that started it, so a link to someone else's consent page
   * signs nobody into a stranger's browser.
   */
  private async load(uid: string, jar: CookieJar) {
    const browserUid = signedInteraction(this.deps.cookies, jar);
    const interaction = browserUid === uid ? await (await this.deps.provider.current()).Interaction.find(uid) : undefined;
    if (!interaction || interaction.result)
      throw notFound('No such sign-in request in this browser: it is unknown, finished, expired, or was started elsewhere', { uid });
    const clientId = String(interaction.params.client_id ?? '');
    const scopes = String(interaction.params.scope ?? '')
      .split(' ')
      .filter(Boolean);
    return { interaction, clientId, scopes };
  }

  /**
   * Whether the app asked for a fresh sign-in that the caller's session does not give: `prompt=login`
   * (a sign-in since the request began) or `max_age` (one within it).
   */
  private freshSignInMissing(interaction: { iat?: number; prompt: { reasons: string[] }; params: Record<string, unknown> }, user: AuthUser): boolean {
    const reasons = interaction.prompt.reasons;
    const authTime = user.authTime ?? 0;
    // a sign-in in the very second the request began is taken as older: nobody signs in that fast
    if (reasons.includes('login_prompt') && authTime <= (interaction.iat ?? epoch())) return true;
    const maxAge = Number(interaction.params.max_age);
    return reasons.includes('max_age') && Number.isFinite(maxAge) && epoch() - authTime > maxAge;
  }

  /** The resources the request asked (the provider refused any other at the authorization endpoint); none asked: the API. */
  private requestedResources(params: Record<string, unknown>): string[] {
    const asked = [params.resource].flat().filter((r): r is string => typeof r === 'string' && this.deps.resources.includes(r));
    return asked.length > 0 ? asked : [this.deps.resources[0]!];
  }

  async details(user: AuthUser, uid: string, jar: CookieJar): Promise<OAuthInteraction> {
    const { interaction, clientId, scopes } = await this.load(uid, jar);
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
    const loginRequired = this.freshSignInMissing(interaction, user);
    return {
      uid,
      client: {
        'client-id': clientId,
        name: client.clientName ?? clientId,
        organization: organization ?? null,
        host: metadataDocumentHost(clientId),
        // only an organization's app was made (and is answered for) by someone the product knows
        reviewed: organization !== undefined,
      },
      scopes,
      // a fresh sign-in is asked on the screen, never allowed at once
      'consent-required': asked.includes('consent') || !covered || loginRequired,
      'login-required': loginRequired,
    };
  }

  /**
   * Route data `reauth`'s condition for the consent route: an Allow that adds `offline_access` or
   * a write scope beyond the live grant, or that the app asked a fresh sign-in for. An unknown
   * request needs none here: the handler answers its 404.
   */
  async needsReauthentication(user: AuthUser, uid: string, jar: CookieJar, allow: boolean): Promise<boolean> {
    if (!allow) return false;
    let loaded: Awaited<ReturnType<Interactions['load']>>;
    try {
      loaded = await this.load(uid, jar);
    } catch {
      return false;
    }
    // judged against this session's own grant: another session's (made with its own sign-in) lends nothing
    const own = await this.deps.grants.live(user.id, loaded.clientId, user.sessionId);
    const adds = loaded.scopes.filter((s) => !own?.scopes.includes(s));
    return adds.some(lasting) || this.freshSignInMissing(loaded.interaction, user);
  }

  /**
   * Allow or Deny. `confirmed`: the route's re-authentication checked the account's password in
   * this request (route data `reauth`), which is a fresh sign-in, now.
   */
  async consent(user: AuthUser, uid: string, jar: CookieJar, allow: boolean, confirmed: boolean, origin: ClientOrigin): Promise<OAuthConsentResult> {
    const { interaction, clientId, scopes } = await this.load(uid, jar);
    if (!allow) {
      interaction.result = { error: 'access_denied', error_description: 'The person declined the request' };
      await interaction.save(Math.max(1, (interaction.exp ?? epoch() + 60) - epoch()));
      return { 'redirect-to': interaction.returnTo };
    }
    // asked a fresh sign-in, the route's re-authentication ran (needsReauthentication): the password
    // it checked is that sign-in; an account without one shows it by its session's age alone
    const fresh = this.freshSignInMissing(interaction, user);
    if (fresh && !confirmed) throw freshSignInRequired();
    const provider = await this.deps.provider.current();
    // a grant belongs to the session that made it and is extended only by it: another session gets
    // a grant of its own, so none passes between a stolen token's session and the owner's
    const own = await this.deps.grants.live(user.id, clientId, user.sessionId);
    const added = scopes.filter((s) => !own?.scopes.includes(s));
    const reuse = own !== undefined;
    const grant = (own && (await provider.Grant.find(own.id))) || new provider.Grant({ accountId: user.id, clientId });
    // every known scope is the provider's (so the app's registration bounds it); API scopes are also the resource's
    const known = scopes.filter((s) => (OIDC_SCOPES as readonly string[]).includes(s) || this.deps.apiScopes.includes(s));
    const api = scopes.filter((s) => this.deps.apiScopes.includes(s));
    if (known.length > 0) grant.addOIDCScope(known.join(' '));
    if (api.length > 0) for (const resource of this.requestedResources(interaction.params)) grant.addResourceScope(resource, api.join(' '));
    const grantId = await grant.save();
    const signedInAt = fresh ? epoch() : user.authTime;
    interaction.result = {
      login: { accountId: user.id, ...(signedInAt ? { ts: signedInAt } : {}) },
      consent: { grantId },
      [SIGNED_IN_SESSION]: user.sessionId,
    };
    // this browser's provider session is another account's: it is signed out here (the provider
    // would otherwise answer the account change with its end-session page, which it does not have)
    const browserSession = (interaction.session as { accountId?: string; cookie?: string } | undefined) ?? {};
    if (browserSession.cookie && browserSession.accountId !== user.id)
      await this.deps.db.deleteFrom('oauth_model').where('model', '=', 'Session').where('id', '=', browserSession.cookie).execute();
    await interaction.save(Math.max(1, (interaction.exp ?? epoch() + 60) - epoch()));
    const client = await provider.Client.find(clientId);
    await this.deps.db.transaction().execute(async (trx) => {
      // the grant ends with the session that consented (src/auth/session-revocation.ts): bound
      // while that session is live, its row locked so an ending in flight is seen first
      const session = await trx.selectFrom('refresh_family').select('revoked_at').where('id', '=', user.sessionId).forUpdate().executeTakeFirst();
      if (!session || session.revoked_at) throw unauthorized(SESSION_ENDED);
      await trx.updateTable('oauth_grant').set({ session_id: user.sessionId }).where('id', '=', grantId).where('session_id', 'is', null).execute();
      // a metadata document's client is known by its document only while the provider keeps it: its connected app keeps the name
      if (metadataDocumentHost(clientId) && client?.clientName)
        await trx.updateTable('oauth_grant').set({ client_name: client.clientName }).where('id', '=', grantId).execute();
      await appendAccountAudit(trx, {
        action: 'oauth-grant.created',
        accountId: user.id,
        target: { type: 'oauth-grant', id: grantId },
        details: { 'client-id': clientId, scopes: scopes.join(' ') },
        origin,
      });
      if (added.length === 0) return;
      const app = client?.clientName ?? clientId;
      const host = metadataDocumentHost(clientId);
      await this.deps.notifications.notify(trx, {
        kind: 'app-connected',
        to: { accounts: [user.id] },
        title: phrase('{app} was connected to your account', { app: host ? `${app} (${host})` : app }),
        body: phrase('It may now: {scopes}. Disconnect it in your connected apps if it was not you.', { scopes: scopes.join(', ') }),
        url: '/settings/connected-apps',
        email: (account) => ({ kind: 'app-connected-notice', to: account.email, data: { name: account.name, app, scopes, at: new Date(), ip: origin.ip } }),
      });
    });
    if (!reuse) this.deps.granted();
    return { 'redirect-to': interaction.returnTo };
  }
}
