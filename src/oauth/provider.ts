/**
 * The OAuth 2.1 / OpenID Connect provider: `oidc-provider` mounted at `/oauth` (issuer
 * `APP_URL/oauth`), configured as docs/oauth.md describes: response type `code` only, PKCE S256 of
 * every client, exact redirect URIs, `iss` in the authorization response, two resources
 * (`APP_URL/api` and `APP_URL/mcp`, RFC 8707: another is `invalid_target`; a token's `aud` is the
 * one asked, the API when none was) whose access tokens are RFC 9068 JWTs
 * signed with the current EdDSA key (a request asking only OpenID scopes gets the UserInfo
 * endpoint's instead), every URL on APP_URL, ID tokens RS256 (or an app's EdDSA / ES256), refresh
 * tokens rotated at every use with reuse revoking the grant. Its keystore is the database's signing
 * keys: when they change (a rotation, a key starting to sign) the provider is rebuilt, so every
 * instance signs with the same key at a time.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { ID_TOKEN_ALGS, type SigningKeys } from '../auth/signing-keys.js';
import type { Config } from '../config.js';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { apiResourceOf, mcpResourceOf, OIDC_SCOPES } from '../shared/oauth-scopes.js';
import { KyselyAdapter, type AdapterDeps } from './adapter.js';
import { secretMatches, type OAuthAppService } from './apps.js';
import { loopbackWithoutPort, METADATA_DOCUMENT_CACHE, type MetadataDocuments } from './client-metadata.js';
import { providerCookies } from './cookies.js';
import type { GrantEndReason, Grants } from './grants.js';
import type { MountGuard } from './mount-guard.js';
import { checkRegistration, REGISTERED_CLIENT_IDLE_SECONDS } from './registration.js';
import { interactionPolicy, signingInSession } from './session-binding.js';

export interface ProviderSettings {
  accessTokenTtl: number;
  refreshTokenTtl: number;
  dynamicRegistration: boolean;
  /** clients named by a Client ID Metadata Document (OAUTH_CLIENT_METADATA_DOCUMENTS) */
  clientMetadataDocuments: boolean;
}

export interface OAuthCounters {
  tokenIssued(grantType: string): void;
  refused(reason: string): void;
}

export interface ProviderDeps {
  config: Config;
  db: DB;
  log: Logger;
  keys: SigningKeys;
  apps: OAuthAppService;
  grants: Grants;
  settings: ProviderSettings;
  counters: OAuthCounters;
  /** the API scopes: the built-in ones and those modules declare */
  apiScopes: readonly string[];
  /** security headers and rate limits in front of the mount */
  guard: MountGuard;
  /** what a registered client may ask: the OpenID scopes and the tools' (known once every route is registered) */
  registrationScopes(): readonly string[];
  /** fetches and checks Client ID Metadata Documents (client-metadata.ts) */
  metadataDocuments: MetadataDocuments;
}

export const issuerOf = (config: Config) => `${config.appUrl}/oauth`;
export const resourceOf = (config: Config) => apiResourceOf(config.appUrl);
/** Every resource the provider issues tokens for: the API's first (the default) */
export const resourcesOf = (config: Config) => [apiResourceOf(config.appUrl), mcpResourceOf(config.appUrl)];

/** The private JWKs oidc-provider signs with: the published keys that can sign, current ones first. */
function keystore(keys: SigningKeys) {
  // oidc-provider signs an ID token with the first key of its algorithm: the ID-token keys come
  // before the access tokens' EdDSA key, which signs only the access tokens that name its kid
  const published = keys.published();
  const ordered = [...published.filter((k) => k.kind !== 'EdDSA'), ...published.filter((k) => k.kind === 'EdDSA')];
  return { keys: ordered.flatMap((k) => (k.privateJwk ? [{ ...k.privateJwk, kid: k.kid, alg: k.alg, use: 'sig' }] : [])) };
}

/** The reason a grant ended, from the request the provider was answering (a code or refresh token presented again). */
function endReason(Provider: OidcProvider['default']): GrantEndReason {
  return Provider.ctx?.oidc?.route === 'token' ? 'refresh-token-reuse' : 'expired';
}

/** Whether the request's `scope` names an API scope (a code or refresh-token request names none). */
const asksApiScope = (ctx: KoaContextWithOIDC, apiScopes: readonly string[]) =>
  String(ctx.oidc.params?.scope ?? '')
    .split(' ')
    .some((s) => apiScopes.includes(s));

/**
 * Every URL the provider publishes or redirects to is on APP_URL: oidc-provider builds them from the
 * request's host and protocol (Host, or X-Forwarded-Host/-Proto behind a trusted proxy), not from its
 * issuer, so a request naming another host would get (and a shared cache could keep) endpoints there.
 */
function publishOn(provider: Provider, appUrl: string): void {
  const { host, protocol } = new URL(appUrl);
  Object.defineProperties(provider.request, {
    host: { get: () => host },
    protocol: { get: () => protocol.slice(0, -1) },
  });
}

/** oidc-provider, loaded on the first OAuth request: a server no app signs in with never pays its memory (docs/performance.md). */
type OidcProvider = typeof import('oidc-provider');

function configuration(deps: ProviderDeps, oidc: OidcProvider): Configuration {
  const { errors, default: Provider } = oidc;
  const { config, db, settings, keys, grants, apps } = deps;
  const resource = resourceOf(config);
  const resources = resourcesOf(config);
  const adapterDeps: AdapterDeps = {
    db,
    findApp: (clientId) => apps.clientMetadata(clientId, /^basic /i.test(Provider.ctx?.get('authorization') ?? '') ? 'basic' : 'post'),
    grantSaved: (id, payload, expiresAt) => grants.saved(id, payload, expiresAt),
    grantDestroyed: (id) => grants.destroyedByProvider(id, endReason(Provider)),
    clientRegistering: (payload) => checkRegistration(payload, errors, deps.registrationScopes()),
    signingInSession: () => signingInSession(Provider.ctx),
    registrationTokenTtl: REGISTERED_CLIENT_IDLE_SECONDS,
  };
  const cookies = providerCookies(config);
  return {
    adapter: (name: string) => new KyselyAdapter(name, adapterDeps),
    // its only outgoing fetch: a metadata document, fetched and checked before (client-metadata.ts)
    fetch: (url: string | URL | Request) => deps.metadataDocuments.fetch(url instanceof Request ? url.url : url),
    jwks: keystore(keys) as Configuration['jwks'],
    // `short.path`: the interaction cookie goes to the whole origin, so the consent API can check
    // that the browser answering is the one the request started in (interactions.ts)
    cookies: {
      keys: cookies.keys,
      names: cookies.names,
      long: { signed: true, secure: cookies.secure, path: '/' },
      short: { signed: true, secure: cookies.secure, path: '/' },
    },
    // the API scopes are listed too, so an app's registered `scope` bounds them (`invalid_scope`
    // beyond); a grant holds them as its OpenID scopes and as the resource's (interactions.ts)
    scopes: [...OIDC_SCOPES, ...deps.apiScopes],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // the ID token carries the scopes' claims (email, name) (docs/oauth.md, "Tokens"), not only the userinfo endpoint
    conformIdTokenClaims: false,
    responseTypes: ['code'],
    pkce: { required: () => true },
    allowOmittingSingleRegisteredRedirectUri: false,
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    enabledJWA: { idTokenSigningAlgValues: ['RS256', 'EdDSA', 'ES256'] },
    rotateRefreshToken: true,
    ttl: {
      AccessToken: settings.accessTokenTtl,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 3600,
      RefreshToken: settings.refreshTokenTtl,
      Grant: settings.refreshTokenTtl,
      Session: settings.refreshTokenTtl,
    },
    // the protocol's error page (a bad redirect_uri, an unknown client): never a redirect to an unregistered URI
    async renderError(ctx, out) {
      ctx.type = 'html';
      const text = (v: unknown) => String(v ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
      ctx.body =
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in error</title></head><body><main>` +
        `<h1>This sign-in request cannot go on</h1><p><code>${text(out.error)}</code>: ${text(out.error_description)}</p></main></body></html>`;
    },
    // the login prompt also asks whenever no live product session stands behind the provider's (session-binding.ts)
    interactions: { policy: interactionPolicy(db, oidc), url: (_ctx, interaction) => `${config.appUrl}/authorize/${interaction.uid}` },
    // a grant belongs to the product session that made it (interactions.ts): this browser's session's
    // own, or the one the consent page just made; another browser's is remembered consent only
    // (the consent page allows at once), never handed over
    async loadExistingGrant(ctx) {
      const clientId = ctx.oidc.client!.clientId;
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session?.grantIdFor(clientId);
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    async findAccount(_ctx, sub) {
      const account = await db.selectFrom('account').select(['id', 'email', 'name', 'email_verified', 'locked_at']).where('id', '=', sub).executeTakeFirst();
      // a locked or deleted account's grants issue nothing more
      if (!account || account.locked_at) return undefined;
      return {
        accountId: account.id,
        claims: async () => ({ sub: account.id, email: account.email, email_verified: account.email_verified, name: account.name ?? undefined }),
      };
    },
    // the account's language, as a session token carries it: the MCP server's refusals and the
    // routes its tools run answer in it (docs/i18n.md), as the app would
    async extraTokenClaims(_ctx, token) {
      const accountId = (token as { accountId?: string }).accountId;
      if (token.kind !== 'AccessToken' || !accountId) return undefined;
      const account = await db.selectFrom('account').select('locale').where('id', '=', accountId).executeTakeFirst();
      return account?.locale ? { locale: account.locale } : undefined;
    },
    formats: {
      customizers: {
        // the grant is the token's session: revoking it refuses the token like an ended session's
        jwt(_ctx, token, jwt) {
          jwt.payload.sid = (token as { grantId?: string }).grantId;
        },
      },
    },
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      // signing out is the product's log-out, which ends the provider's sessions too (session-binding.ts);
      // an end-session endpoint would store a session per anonymous request and redirect anywhere registered
      rpInitiatedLogout: { enabled: false },
      clientIdMetadataDocument: {
        enabled: settings.clientMetadataDocuments,
        ack: 'draft-02',
        cacheDuration: METADATA_DOCUMENT_CACHE,
        allowFetch: (_ctx, clientId) => deps.metadataDocuments.allowFetch(clientId, errors),
      },
      registration: {
        enabled: settings.dynamicRegistration,
        idFactory: () => `mcp_${crypto.randomUUID().replaceAll('-', '')}`,
      },
      resourceIndicators: {
        enabled: true,
        // asking an API scope gets the API's token; asking only OpenID scopes, a token for the UserInfo
        // endpoint, which refuses one bound to a resource (docs/oauth.md, "Tokens"); the code and its
        // refresh tokens keep the choice; a code for several resources redeemed without naming one gets the API's
        defaultResource: (ctx, _client, oneOf) =>
          oneOf ? (oneOf.includes(resource) ? resource : oneOf[0]) : asksApiScope(ctx, deps.apiScopes) ? resource : undefined,
        useGrantedResource: () => true,
        // the API and the MCP server take the same scopes; each takes only tokens for itself (`aud`)
        getResourceServerInfo(_ctx, indicator) {
          if (!resources.includes(indicator)) throw new errors.InvalidTarget();
          const current = keys.current('EdDSA');
          return {
            scope: deps.apiScopes.join(' '),
            audience: indicator,
            accessTokenTTL: settings.accessTokenTtl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'EdDSA', ...(current ? { kid: current.kid } : {}) } },
          };
        },
      },
    },
    extraClientMetadata: {
      properties: [],
    },
  };
}

function build(deps: ProviderDeps, oidc: OidcProvider): Provider {
  const provider = new oidc.default(issuerOf(deps.config), configuration(deps, oidc));
  publishOn(provider, deps.config.appUrl);
  // now only the client's address (ctx.ip, X-Forwarded-For's) follows TRUST_PROXY, and no enabled feature reads it
  provider.proxy = deps.config.trustProxy !== false;
  // a confidential app's secret is kept hashed: the presented one is hashed and compared
  provider.Client.prototype.compareClientSecret = function compare(this: { clientSecret?: string }, actual: string) {
    return Promise.resolve(typeof this.clientSecret === 'string' && secretMatches(actual, this.clientSecret));
  } as never;
  // a metadata document's loopback redirect URI takes any port (RFC 8252 §7.3), as a native app's does
  const exactly = provider.Client.prototype.redirectUriAllowed;
  provider.Client.prototype.redirectUriAllowed = function allowed(this: InstanceType<Provider['Client']>, value: string) {
    if (exactly.call(this, value)) return true;
    const bare = (this as { clientIdMetadataDocument?: boolean }).clientIdMetadataDocument ? loopbackWithoutPort(value) : undefined;
    return bare !== undefined && this.redirectUris!.some((uri) => loopbackWithoutPort(uri) === bare);
  };
  const { log, counters, grants } = deps;
  provider.on('registration_create.success', (_ctx, client) =>
    log.info('oauth/client-registered', 'A client registered itself', { 'client-id': client.clientId }),
  );
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    counters.tokenIssued(String(ctx.oidc.params?.grant_type ?? 'unknown'));
    const grantId = (ctx.oidc.entities.RefreshToken ?? ctx.oidc.entities.AuthorizationCode) as { grantId?: string } | undefined;
    if (grantId?.grantId) void grants.touch(grantId.grantId).catch(() => undefined);
  });
  const refused = (_ctx: unknown, err: { error?: string }) => counters.refused(err.error ?? 'server_error');
  provider.on('grant.error', refused);
  provider.on('authorization.error', refused);
  provider.on('registration_create.error', refused);
  provider.on('server_error', (_ctx, err: Error) => log.error('oauth/server-error', `The OAuth provider failed: ${err.message}`, { stack: err.stack }));
  return provider;
}

/**
 * The provider, built on first use and rebuilt when the signing keys change; `handle` is the
 * mount's request listener.
 */
export class OAuthProvider {
  private built: Promise<{ provider: Provider; listener: (req: IncomingMessage, res: ServerResponse) => void }> | undefined;
  /** the first build is making the ID-token keys: the change they cause needs no second build */
  private makingKeys = false;

  constructor(private readonly deps: ProviderDeps) {
    deps.keys.onChange(() => {
      if (this.built !== undefined && !this.makingKeys) this.built = this.build();
    });
  }

  private build() {
    return import('oidc-provider').then((oidc) => {
      const provider = build(this.deps, oidc);
      return { provider, listener: provider.callback() };
    });
  }

  /** The ID-token keys are made on the first build (signing-keys.ts), then the provider is built with them. */
  private async firstBuild() {
    this.makingKeys = true;
    try {
      await this.deps.keys.ensure(ID_TOKEN_ALGS);
    } catch (err) {
      // the database may be away for a moment: the next request tries again
      this.built = undefined;
      throw err;
    } finally {
      this.makingKeys = false;
    }
    return this.build();
  }

  /** whether the last try to load failed (oauth/load-failed said) */
  private loadFailing = false;

  private get ready() {
    this.built ??= this.firstBuild();
    return this.built;
  }

  async current(): Promise<Provider> {
    return (await this.ready).provider;
  }

  /** The metadata paths of RFC 8414 answer with the provider's discovery document. */
  handle(req: IncomingMessage, res: ServerResponse, clientAddress: string): void {
    const path = (req.url ?? '/').split('?')[0]!;
    // the provider builds its URLs from the mount path: the part of `originalUrl` before `url`
    const url = path.startsWith('/.well-known/oauth-authorization-server') ? '/oauth/.well-known/openid-configuration' : (req.url ?? '/');
    (req as IncomingMessage & { originalUrl?: string }).originalUrl = url;
    req.url = url.slice('/oauth'.length) || '/';
    const started = Date.now();
    res.on('finish', () => {
      // the path only: a query may hold a code or state
      this.deps.log.info('oauth/request', `${req.method} ${path} => ${res.statusCode}`, { status: res.statusCode, 'saas.logging/ms': Date.now() - started });
    });
    this.deps.guard.admit(req, res, path, clientAddress).then(
      (admitted) => {
        if (admitted) this.serve(req, res);
      },
      (err: Error) => {
        // the rate limit's counters could not be read: refused rather than unlimited
        this.deps.log.warn('oauth/limit-failed', `The OAuth rate limit could not be checked: ${err.message}`);
        res.statusCode = 503;
        res.setHeader('retry-after', '1');
        res.end();
      },
    );
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    this.ready.then(
      ({ listener }) => {
        if (this.loadFailing) this.deps.log.info('oauth/load-recovered', 'The OAuth provider is loaded');
        this.loadFailing = false;
        listener(req, res);
      },
      (err: Error) => {
        // while the database is away every request tries again: said once until one works
        if (!this.loadFailing) this.deps.log.error('oauth/load-failed', `The OAuth provider could not be loaded: ${err.message} (said once until it loads)`);
        this.loadFailing = true;
        res.statusCode = 503;
        res.end();
      },
    );
  }
}
