/** Helpers for the MCP tests: the official SDK client on `APP_URL/mcp`, raw JSON-RPC requests, and an OAuth token for the MCP server. */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as client from 'openid-client';
import type { TestSystem } from '../support/system.js';
import { authorize, createApp, newBrowser, REDIRECT } from '../oauth/support.js';

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
