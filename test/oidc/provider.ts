/**
 * A real OpenID provider for tests (`oidc-provider`) on 127.0.0.1, with one client registered
 * for the app, PKCE required, and a login page of its own at `/interaction/:uid` (a form with a
 * username; "Cancel" denies). Consent is given for the app as a first-party client. People are
 * the entries of `accounts`, changeable between sign-ins (an email changed at the provider).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';

export interface PersonAtProvider {
  email?: string;
  emailVerified?: boolean;
  name?: string;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** the people who can sign in, by subject (the login name typed at the provider) */
  accounts: Map<string, PersonAtProvider>;
  /** the provider's authorization endpoint, from its discovery document */
  authorizationEndpoint: string;
  /**
   * Signs `login` in at the provider for an authorization URL, following the provider's
   * redirects with a cookie jar of its own, and returns the URL it sends the browser back to.
   * `deny`: "Cancel" on the login page.
   */
  authorize(authorizationUrl: string, login: string, options?: { deny?: boolean }): Promise<URL>;
  stop(): Promise<void>;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** `port`: a fixed port (a provider that comes up where one was down), else any free one. */
export async function startTestProvider(options: { redirectUris: string[]; port?: number }): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const clientId = 'saas-app';
  const clientSecret = `op-secret-${randomBytes(12).toString('hex')}`;
  const accounts = new Map<string, PersonAtProvider>();
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    scopes: ['openid', 'email', 'profile'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => {
        const person = accounts.get(sub) ?? {};
        return {
          sub,
          ...(person.email !== undefined ? { email: person.email, email_verified: person.emailVerified ?? false } : {}),
          ...(person.name !== undefined ? { name: person.name } : {}),
        };
      },
    }),
    // the app is a first-party client: its consent is implied
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });

  const interaction = async (req: IncomingMessage, res: ServerResponse) => {
    const details = await provider.interactionDetails(req, res);
    if (req.method === 'GET') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><title>Test provider</title><h1>Sign in at the test provider</h1>
        <form method="post" action="/interaction/${escapeHtml(details.uid)}">
          <label>Username <input name="login" autofocus></label>
          <button type="submit" name="action" value="login">Sign in</button>
          <button type="submit" name="action" value="cancel">Cancel</button>
        </form>`);
      return;
    }
    const form = await readForm(req);
    if (form.get('action') === 'cancel') {
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'End-User aborted interaction' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    await provider.interactionFinished(req, res, { login: { accountId: form.get('login') ?? '' } }, { mergeWithLastSubmission: false });
  };
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      interaction(req, res).catch((err: Error) => {
        res.statusCode = 500;
        res.end(err.message);
      });
      return;
    }
    callback(req, res);
  });

  const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { authorization_endpoint: string };

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    authorizationEndpoint: discovery.authorization_endpoint,
    async authorize(authorizationUrl, login, { deny = false } = {}) {
      const jar = new Map<string, string>();
      const send = async (url: string, init: RequestInit = {}) => {
        const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
        const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) } });
        for (const line of res.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const eq = pair.indexOf('=');
          jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
        }
        await res.arrayBuffer();
        return res;
      };
      let res = await send(authorizationUrl);
      // bounded: authorize -> login page -> resume -> back to the app
      for (let hop = 0; hop < 8; hop++) {
        const location = res.headers.get('location');
        if (!location) throw new Error(`the provider answered ${res.status} without a redirect`);
        const next = new URL(location, issuer);
        if (next.origin !== issuer) return next;
        if (next.pathname.startsWith('/interaction/')) {
          res = await send(next.href, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ login, action: deny ? 'cancel' : 'login' }).toString(),
          });
        } else {
          res = await send(next.href);
        }
      }
      throw new Error('the provider did not send the browser back within 8 redirects');
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
