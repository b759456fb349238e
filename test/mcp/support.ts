/** Helpers for the MCP tests: the official SDK client on `APP_URL/mcp`, raw JSON-RPC requests, and an OAuth token for the MCP server. */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as client from 'openid-client';
import type { TestSystem } from '../support/system.js';
import { authorize, createApp, interactionCookie, newBrowser, REDIRECT } from '../oauth/support.js';
import { PASSWORD } from '../support/auth.js';

/** An SDK client connected (initialized) with `Authorization: Bearer <credential>`. */
export async function connect(url: string, credential: string): Promise<Client> {
  const mcp = new Client({ name: 'saas-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${credential}` } } });
  await mcp.connect(transport);
  return mcp;
}

/** A raw request to `/mcp`: the status, headers and parsed body. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${url}/mcp`, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    ...(method === 'POST' ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export const rpc = (method: string, params: Record<string, unknown> = {}, id = 1) => ({ jsonrpc: '2.0', id, method, params });

export const INITIALIZE = rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });

/** The JSON of an error result's one text content. */
export function errorOf(result: CallToolResult | Record<string, unknown>): any {
  const r = result as CallToolResult;
  assert.equal(r.isError, true, JSON.stringify(r));
  assert.equal(r.content.length, 1);
  return JSON.parse((r.content[0] as { text: string }).text);
}

/** An organization's public OAuth app allowed `scopes`, and its client configuration. */
export async function mcpApp(t: TestSystem, ownerToken: string, orgId: string, scopes: string[]): Promise<client.Configuration> {
  const app = await createApp(t, ownerToken, orgId, { confidential: false, scopes });
  return client.discovery(new URL(`${t.url}/oauth`), app['client-id'], { redirect_uris: [REDIRECT] }, client.None(), {
    execute: [client.allowInsecureRequests],
  });
}

/** An access token for `APP_URL/mcp` with `scope`, the person (`sessionToken`) allowing it on the consent API. */
export async function mcpToken(t: TestSystem, config: client.Configuration, sessionToken: string, scope: string): Promise<string> {
  const { tokens } = await authorize(t, config, newBrowser(), sessionToken, { scope, resource: `${t.url}/mcp` });
  return tokens.access_token;
}

/**
 * An MCP client's OAuth side for the SDK's own `auth` flow (discovery from the 401, PKCE, RFC 8707
 * `resource`, a metadata document's URL or dynamic registration): the person's browser is driven
 * through the consent page's API with their session token, and the code it brings back is kept.
 */
export class TestOAuthClient implements OAuthClientProvider {
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  /** the code the last authorization brought back */
  code = '';
  /** the interactions the consent page showed */
  readonly interactions: any[] = [];
  readonly browser = newBrowser();

  constructor(
    private readonly t: Pick<TestSystem, 'client'>,
    private readonly sessionToken: string,
    readonly redirectUrl: string,
    readonly clientMetadata: OAuthClientMetadata,
    /** the Client ID Metadata Document's URL; undefined: the client registers itself */
    readonly clientMetadataUrl?: string,
  ) {}

  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }

  async redirectToAuthorization(url: URL) {
    let step = await this.browser.visit(url.href);
    for (let hops = 0; !step.location.startsWith(this.redirectUrl); hops++) {
      assert.ok(hops < 6, `too many redirects (at ${step.location})`);
      const page = /\/authorize\/([^/?#]+)$/.exec(step.location);
      assert.ok(page || step.status === 303, `the provider answered ${step.status} at ${step.location}`);
      if (!page) {
        step = await this.browser.visit(step.location);
        continue;
      }
      const headers = { authorization: `Bearer ${this.sessionToken}`, cookie: interactionCookie(this.browser) };
      const details = await this.t.client('GET', `/api/oauth/interactions/${page[1]}`, { headers });
      assert.equal(details.status, 200, details.text);
      this.interactions.push(details.body);
      let consent = await this.t.client('POST', `/api/oauth/interactions/${page[1]}/consent`, { headers, body: { allow: true } });
      if (consent.status === 403 && consent.body.method === 'password')
        consent = await this.t.client('POST', `/api/oauth/interactions/${page[1]}/consent`, { headers, body: { allow: true, password: PASSWORD } });
      assert.equal(consent.status, 200, consent.text);
      step = await this.browser.visit(consent.body['redirect-to']);
    }
    const back = new URL(step.location);
    assert.equal(back.searchParams.get('error'), null, back.href);
    this.code = back.searchParams.get('code')!;
  }
}

/**
 * Connects the SDK client as an MCP client does the first time: the 401, its OAuth flow with
 * `provider`, the code redeemed (`finishAuth`), then connected with the token it got.
 */
export async function connectWithOAuth(url: string, provider: TestOAuthClient): Promise<Client> {
  const first = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider: provider });
  await assert.rejects(new Client({ name: 'saas-test', version: '1.0.0' }).connect(first), UnauthorizedError);
  await first.finishAuth(provider.code);
  const mcp = new Client({ name: 'saas-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider: provider }));
  return mcp;
}
