/**
 * The AI assistants page (`/settings/ai-assistants`, docs/mcp.md): the MCP server's URL to copy,
 * how to add it in Claude, ChatGPT, Cursor and VS Code (the URL is all they need: each opens a
 * sign-in window where the person allows scopes), and the assistants connected, with their
 * scopes in the consent screen's words, their last use and Revoke.
 */
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { ConnectedAppName, RevokeAppButton, ScopeList } from '../oauth/consent-pages.js';
import { useApp } from '../ui/app.js';
import { Button } from '../ui/button.js';
import { Card, Stack } from '../ui/card.js';
import { dateTime } from '../ui/dates.js';
import { Alert } from '../ui/feedback.js';
import { CopyField } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { serverKeyOf } from './events.js';

/** A configuration file's content with a copy button, named by `what` ("Cursor's configuration"). */
function Snippet({ id, what, text }: { id: string; what: string; text: string }) {
  const { dispatch } = useApp();
  return (
    <div class="space-y-2">
      <pre id={id} class="whitespace-pre-wrap wrap-anywhere rounded-lg border border-line bg-raised p-3 font-mono text-xs">
        {text}
      </pre>
      <Button variant="secondary" class="copy-snippet" aria-label={`Copy ${what}`} onClick={() => dispatch(['assistants/copy', text, what])}>
        Copy
      </Button>
    </div>
  );
}

function HowTo({ id, name, children }: { id: string; name: string; children: ComponentChildren }) {
  return (
    <section id={id} aria-labelledby={`${id}-title`} class="space-y-2">
      <h3 id={`${id}-title`} class="font-semibold">
        {name}
      </h3>
      {children}
    </section>
  );
}

function Instructions({ url }: { url: string }) {
  const { state } = useApp();
  const product = state.product?.name ?? 'SaaS';
  const key = serverKeyOf(product);
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  return (
    <Card
      id="connect-assistant"
      title="Connect an assistant"
      description={`Add the URL as a remote MCP server. The assistant then opens a sign-in window: sign in to ${product} and allow what it asks. Allowing changes, or access that lasts, asks for your password again.`}
    >
      <HowTo id="connect-claude" name="Claude">
        <p>
          In Settings → Connectors, choose <strong>Add custom connector</strong>, name it {product}, paste the URL and add it. Then choose{' '}
          <strong>Connect</strong>.
        </p>
      </HowTo>
      <HowTo id="connect-chatgpt" name="ChatGPT">
        <p>
          In Settings → Apps &amp; Connectors, turn on <strong>Developer mode</strong> (Advanced settings), then create a connector named {product} with the URL
          and OAuth authentication.
        </p>
      </HowTo>
      <HowTo id="connect-cursor" name="Cursor">
        <p>
          Add the server to <code>~/.cursor/mcp.json</code> (or a project's <code>.cursor/mcp.json</code>), then connect it in Cursor's MCP settings:
        </p>
        <Snippet id="cursor-config" what="Cursor's configuration" text={json({ mcpServers: { [key]: { url } } })} />
      </HowTo>
      <HowTo id="connect-vscode" name="VS Code">
        <p>
          Run <strong>MCP: Add Server</strong> from the Command Palette, choose HTTP and paste the URL; or add it to a workspace's <code>.vscode/mcp.json</code>
          :
        </p>
        <Snippet id="vscode-config" what="VS Code's configuration" text={json({ servers: { [key]: { type: 'http', url } } })} />
      </HowTo>
    </Card>
  );
}

function ServerUrl() {
  const { state, dispatch } = useApp();
  const server = state.mcpServer;
  return (
    <Card id="mcp-server" title="MCP server URL" description="The one thing an assistant needs to reach your account.">
      {server?.url ? (
        <div class="flex flex-wrap gap-2 sm:flex-nowrap">
          <CopyField id="mcp-server-url" label="MCP server URL" value={server.url} />
          <Button id="copy-mcp-server-url" onClick={() => dispatch(['assistants/copy', server.url, 'The server URL'])}>
            Copy
          </Button>
        </div>
      ) : server?.status === 'failed' ? (
        <Alert id="mcp-server-missing" tone="error">
          The server's URL could not be loaded. Reload the page to try again.
        </Alert>
      ) : (
        <p class="text-muted" role="status">
          Loading…
        </p>
      )}
    </Card>
  );
}

export function AssistantsPage() {
  const { state, dispatch } = useApp();
  useEffect(() => {
    dispatch(['assistants/open']);
    dispatch(['connected-apps/load']);
  }, []);
  const url = state.mcpServer?.url;
  return (
    <>
      <PageHeader
        title="AI assistants"
        description="Let an assistant such as Claude, ChatGPT, Cursor or VS Code work with your account. It acts as you: it sees what you allow and does what your role permits."
      />
      <Stack>
        <ServerUrl />
        {url && <Instructions url={url} />}
        <Card id="connected-assistants-card" title="Connected assistants" description="Revoke one and its next call is refused.">
          <Table
            id="connected-assistants"
            caption="Your connected AI assistants"
            headers={['Assistant', 'Access', 'Last used', '']}
            rows={state.connectedApps?.filter((app) => app.assistant)}
            loadingText="Loading assistants…"
            empty="No assistant is connected. Add the URL to one: it appears here once you allow it."
            emptyId="no-assistants"
            render={(app) => (
              <tr key={app.id} data-assistant={app.id} data-reviewed={String(app.reviewed)}>
                <td>
                  <ConnectedAppName app={app} />
                </td>
                <td>
                  <ScopeList scopes={app.scopes} id={`assistant-scopes-${app.id}`} />
                </td>
                <td data-field="last-used-at">{dateTime(app['last-used-at'], 'never')}</td>
                <td>
                  <RevokeAppButton
                    app={app}
                    class="revoke-assistant"
                    verb="Revoke"
                    message="Its access ends at once: its next call is refused, and it must ask you again to come back."
                  />
                </td>
              </tr>
            )}
          />
        </Card>
      </Stack>
    </>
  );
}
