/**
 * An OAuth access token for the project's MCP server (`APP_URL/mcp`, docs/mcp.md), got the way an
 * MCP client gets one: the authorization server's metadata (RFC 8414), an organization's public
 * OAuth app, the authorization code flow with PKCE and RFC 8707's `resource=APP_URL/mcp`, the
 * person allowing it through the consent page's API with their own session token. The same steps
 * as the tests' `mcpToken` (test/mcp/support.ts, test/oauth/support.ts), on plain `fetch`.
 */
import { createHash, randomBytes } from 'node:crypto';

// nothing listens there: the flow ends at the redirect's Location
const REDIRECT = 'http://127.0.0.1:8765/callback';
/** the provider's interaction cookie and its signature: what the consent API reads to know the browser */
const INTERACTION_COOKIE = /^(__Host-)?oauth_interaction(\.sig)?$/;

async function api(url: string, method: string, path: string, headers: Record<string, string>, body: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`bench: ${method} ${path} answered ${res.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/** A token for `<url>/mcp` holding `scope`, allowed by the account whose session token is `sessionToken`. */
export async function mcpToken(url: string, sessionToken: string, scope: string): Promise<string> {
  const person = { authorization: `Bearer ${sessionToken}` };
  const org = await api(url, 'POST', '/api/orgs', person, { name: 'Bench' });
  const app = await api(url, 'POST', `/api/orgs/${org.id}/oauth-apps`, person, {
    name: 'Bench assistant',
    'redirect-uris': [REDIRECT],
    confidential: false,
    scopes: scope.split(' '),
  });
  const metadata = (await (await fetch(`${url}/.well-known/oauth-authorization-server/oauth`)).json()) as {
    authorization_endpoint: string;
    token_endpoint: string;
  };

  const verifier = randomBytes(32).toString('base64url');
  const authorization = new URL(metadata.authorization_endpoint);
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: app['client-id'],
    redirect_uri: REDIRECT,
    scope,
    resource: `${url}/mcp`,
    state: randomBytes(16).toString('base64url'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }))
    authorization.searchParams.set(name, value);

  // a browser's cookies for the provider, and one step of its redirects
  const cookies = new Map<string, string>();
  const visit = async (at: string) => {
    const res = await fetch(at, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    await res.arrayBuffer();
    return new URL(res.headers.get('location') ?? '', at).href;
  };
  let location = await visit(authorization.href);
  for (let hops = 0; !location.startsWith(REDIRECT); hops++) {
    if (hops === 6) throw new Error(`bench: the authorization did not come back (at ${location})`);
    const uid = /\/authorize\/([^/?#]+)$/.exec(location)?.[1];
    if (!uid) {
      location = await visit(location);
      continue;
    }
    // the consent page's API: the person's session token, and the browser's interaction cookie
    const interaction = [...cookies].filter(([name]) => INTERACTION_COOKIE.test(name)).map(([k, v]) => `${k}=${v}`);
    const consent = await api(url, 'POST', `/api/oauth/interactions/${uid}/consent`, { ...person, cookie: interaction.join('; ') }, { allow: true });
    location = await visit(consent['redirect-to']);
  }
  const code = new URL(location).searchParams.get('code');
  if (!code) throw new Error(`bench: the authorization was refused: ${location}`);
  const res = await fetch(metadata.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app['client-id'], code_verifier: verifier }),
  });
  const tokens = (await res.json()) as { access_token?: string; error?: string };
  if (!tokens.access_token) throw new Error(`bench: the token endpoint answered ${res.status}: ${JSON.stringify(tokens)}`);
  return tokens.access_token;
}
