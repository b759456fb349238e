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
import { t } from '../i18n/words.js';
import { rich } from '../i18n/rich.js';

/** A configuration file's content with a copy button, named by `what` ("Cursor's configuration"). */
function Snippet({ id, what, text }: { id: string; what: string; text: string }) {
  const { dispatch } = useApp();
  return (
    <div class="space-y-2">
      <pre id={id} class="whitespace-pre-wrap wrap-anywhere rounded-lg border border-line bg-raised p-3 font-mono text-xs">
        {text}
      </pre>
      <Button variant="secondary" class="copy-snippet" aria-label={t('Copy {what}', { what })} onClick={() => dispatch(['assistants/copy', text, what])}>
        {t('Copy')}
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
      title={t('Connect an assistant')}
      description={t(
        'Add the URL as a remote MCP server. The assistant then opens a sign-in window: sign in to {product} and allow what it asks. Allowing changes, or access that lasts, asks for your password again.',
        { product },
      )}
    >
      <HowTo id="connect-claude" name="Claude">
        <p>
          {rich(
            'In Settings → Connectors, choose <0>Add custom connector</0>, name it {product}, paste the URL and add it. Then choose <1>Connect</1>.',
            [(text) => <strong>{text}</strong>, (text) => <strong>{text}</strong>],
            { product },
          )}
        </p>
      </HowTo>
      <HowTo id="connect-chatgpt" name="ChatGPT">
        <p>
          {rich(
            'In Settings → Apps & Connectors, turn on <0>Developer mode</0> (Advanced settings), then create a connector named {product} with the URL and OAuth authentication.',
            [(text) => <strong>{text}</strong>],
            { product },
          )}
        </p>
      </HowTo>
      <HowTo id="connect-cursor" name="Cursor">
        <p>
          {rich("Add the server to <0/> (or a project's <1/>), then connect it in Cursor's MCP settings:", [
            <code>~/.cursor/mcp.json</code>,
            <code>.cursor/mcp.json</code>,
          ])}
        </p>
        <Snippet id="cursor-config" what={t("Cursor's configuration")} text={json({ mcpServers: { [key]: { url } } })} />
      </HowTo>
      <HowTo id="connect-vscode" name="VS Code">
        <p>
          {rich("Run <0>MCP: Add Server</0> from the Command Palette, choose HTTP and paste the URL; or add it to a workspace's <1/>:", [
            (text) => <strong>{text}</strong>,
            <code>.vscode/mcp.json</code>,
          ])}
        </p>
        <Snippet id="vscode-config" what={t("VS Code's configuration")} text={json({ servers: { [key]: { type: 'http', url } } })} />
      </HowTo>
    </Card>
  );
}

function ServerUrl() {
  const { state, dispatch } = useApp();
  const server = state.mcpServer;
  return (
    <Card id="mcp-server" title={t('MCP server URL')} description={t('The one thing an assistant needs to reach your account.')}>
      {server?.url ? (
        <div class="flex flex-wrap gap-2 sm:flex-nowrap">
          <CopyField id="mcp-server-url" label={t('MCP server URL')} value={server.url} />
          <Button id="copy-mcp-server-url" onClick={() => dispatch(['assistants/copy', server.url, t('The server URL')])}>
            {t('Copy')}
          </Button>
        </div>
      ) : server?.status === 'failed' ? (
        <Alert id="mcp-server-missing" tone="error">
          {t("The server's URL could not be loaded. Reload the page to try again.")}
        </Alert>
      ) : (
        <p class="text-muted" role="status">
          {t('Loading…')}
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
        title={t('AI assistants')}
        description={t(
          'Let an assistant such as Claude, ChatGPT, Cursor or VS Code work with your account. It acts as you: it sees what you allow and does what your role permits.',
        )}
      />
      <Stack>
        <ServerUrl />
        {url && <Instructions url={url} />}
        <Card id="connected-assistants-card" title={t('Connected assistants')} description={t('Revoke one and its next call is refused.')}>
          <Table
            id="connected-assistants"
            caption={t('Your connected AI assistants')}
            headers={[t('Assistant'), t('Access'), t('Last used'), '']}
            rows={state.connectedApps?.filter((app) => app.assistant)}
            loadingText={t('Loading assistants…')}
            empty={t('No assistant is connected. Add the URL to one: it appears here once you allow it.')}
            emptyId="no-assistants"
            render={(app) => (
              <tr key={app.id} data-assistant={app.id} data-reviewed={String(app.reviewed)}>
                <td>
                  <ConnectedAppName app={app} />
                </td>
                <td>
                  <ScopeList scopes={app.scopes} id={`assistant-scopes-${app.id}`} />
                </td>
                <td data-field="last-used-at">{dateTime(app['last-used-at'], t('never'))}</td>
                <td>
                  <RevokeAppButton
                    app={app}
                    class="revoke-assistant"
                    verb={t('Revoke')}
                    title={t('Revoke {name}?', { name: app.name })}
                    message={t('Its access ends at once: its next call is refused, and it must ask you again to come back.')}
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
