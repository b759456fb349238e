/**
 * The AI assistants page's events against a fake transport: its route and navigation item, the
 * MCP server's URL read from its protected resource metadata (asked once, without the session's
 * token; a failure or an answer without `resource` is the page's `failed` state), copying, and
 * the configuration files' server key.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { registerApiKeys } from '../../src/client/api-keys/events.js';
import { FEATURES, routeOf } from '../../src/client/app.js';
import { MCP_RESOURCE_METADATA, registerAssistants, serverKeyOf } from '../../src/client/assistants/events.js';
import type { TransportResponse } from '../../src/client/http.js';
import { callOf, fakeClient } from '../support/client-events.js';

const RESOURCE = 'https://app.example.com/mcp';
const asJson = (body: unknown, status = 200): TransportResponse => ({ status, contentType: 'application/json; charset=utf-8', text: JSON.stringify(body) });

function setup(metadata: () => TransportResponse | undefined, options: { copyFails?: boolean } = {}) {
  const copied: string[] = [];
  const client = fakeClient('ai-assistants', (req) => (callOf(req) === `GET ${MCP_RESOURCE_METADATA}` ? metadata() : undefined));
  registerApiKeys(client.core, {
    copy: async (text) => {
      if (options.copyFails) throw new Error('denied');
      copied.push(text);
    },
  });
  registerAssistants(client.core);
  return { ...client, copied };
}

describe('client AI assistants events', () => {
  it('routes /settings/ai-assistants, linked in the settings beside Connected apps', () => {
    assert.equal(routeOf('/settings/ai-assistants'), 'ai-assistants');
    const settings = FEATURES.flatMap((f) => f.nav ?? [])
      .filter((n) => n.section === 'settings')
      .sort((a, b) => a.order - b.order)
      .map((n) => n.route);
    assert.equal(settings[settings.indexOf('connected-apps') + 1], 'ai-assistants');
  });

  it("reads the server's URL from the protected resource metadata once, without the session's token", async () => {
    const s = setup(() => asJson({ resource: RESOURCE, authorization_servers: ['https://app.example.com/oauth'] }));
    await s.run(['assistants/open']);
    assert.deepEqual(s.requests.map(callOf), [`GET ${MCP_RESOURCE_METADATA}`]);
    assert.equal(s.requests[0].headers.accept, 'application/json');
    assert.equal(s.requests[0].headers.authorization, undefined, 'a public document: no token goes with it');
    assert.deepEqual(s.core.state.mcpServer, { status: 'ready', url: RESOURCE });
    await s.run(['assistants/open']);
    assert.equal(s.requests.length, 1, 'the URL does not change: entering the page again asks nothing');
  });

  it('shows a failure when the document cannot be had or names no resource, and asks again on the next entry', async () => {
    let answer: TransportResponse = asJson({ type: 'unavailable', message: 'down' }, 503);
    const s = setup(() => answer);
    await s.run(['assistants/open']);
    assert.deepEqual(s.core.state.mcpServer, { status: 'failed' });
    answer = asJson({ authorization_servers: [] });
    await s.run(['assistants/open']);
    assert.deepEqual(s.core.state.mcpServer, { status: 'failed' });
    answer = asJson({ resource: RESOURCE });
    await s.run(['assistants/open']);
    assert.deepEqual(s.core.state.mcpServer, { status: 'ready', url: RESOURCE });
    assert.equal(s.requests.length, 3);
  });

  it('copies a text and says what was copied; a refused clipboard is an error toast', async () => {
    const s = setup(() => undefined);
    await s.run(['assistants/copy', RESOURCE, 'The server URL']);
    assert.deepEqual(s.copied, [RESOURCE]);
    assert.equal(s.core.state.toasts.at(-1)?.message, 'The server URL copied');
    const refused = setup(() => undefined, { copyFails: true });
    await refused.run(['assistants/copy', RESOURCE, 'The server URL']);
    assert.equal(refused.core.state.toasts.at(-1)?.kind, 'error');
    assert.match(refused.core.state.toasts.at(-1)?.message ?? '', /Copying failed/);
  });

  it('names the server in a configuration file after the product, in lower case without accents, with dashes', () => {
    assert.equal(serverKeyOf('Rocketship'), 'rocketship');
    assert.equal(serverKeyOf('  Acme Cloud  2 '), 'acme-cloud-2');
    assert.equal(serverKeyOf('Ünïcode!'), 'unicode');
    assert.equal(serverKeyOf('***'), 'saas');
  });
});
