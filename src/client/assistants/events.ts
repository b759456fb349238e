/**
 * The AI assistants page's state and events (docs/mcp.md, "Connecting an assistant"): the MCP
 * server's URL, read from its protected resource metadata (RFC 9728: the `resource` it names is
 * the URL an assistant must use, which the page's own origin need not be), and copying it or a
 * configuration snippet. The connected assistants are the oauth feature's connected apps
 * (`connected-apps/load`, `connected-apps/revoke`) whose grant reaches the MCP server.
 */
import type { EventCore } from '../core.js';
import type { AppState } from '../shell/state.js';
import { t } from '../i18n/words.js';

/** Where the MCP server's protected resource metadata is served (RFC 9728). */
export const MCP_RESOURCE_METADATA = '/.well-known/oauth-protected-resource/mcp';

/** The server's key in an assistant's configuration file (Cursor's, VS Code's): the product's name, lower case, without accents, letters and digits joined by `-`. */
export const serverKeyOf = (product: string) =>
  product
    .normalize('NFKD')
    // the accents decomposed above: "Ünïcode" is "unicode"
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '') || 'saas';

export interface AssistantsState {
  /** the MCP server's URL once the metadata answered; `failed` when it could not be had */
  mcpServer?: { status: 'loading' | 'ready' | 'failed'; url?: string };
}

declare module '../shell/state.js' {
  interface AppState extends AssistantsState {}
}

export function registerAssistants(core: EventCore<AppState>): void {
  core
    .regEvent('assistants/open', ({ state }) => {
      // the server's URL does not change while the page lives: asked once
      if (state.mcpServer?.status === 'ready') return;
      return {
        db: { ...state, mcpServer: { status: 'loading' } },
        'http/request': { url: MCP_RESOURCE_METADATA, accept: 'json', onSuccess: ['assistants/server-loaded'], onFailure: ['assistants/server-failed'] },
      };
    })
    .regEvent('assistants/server-loaded', ({ state }, [, metadata]) => {
      const url = (metadata as { resource?: unknown } | undefined)?.resource;
      if (typeof url !== 'string') return { db: { ...state, mcpServer: { status: 'failed' } } };
      return { db: { ...state, mcpServer: { status: 'ready', url } } };
    })
    .regEvent('assistants/server-failed', ({ state }) => ({ db: { ...state, mcpServer: { status: 'failed' } } }))
    // `what` names the text in the toast: "The server URL", "Cursor's configuration"
    .regEvent('assistants/copy', (_ctx, [, text, what]) => ({
      'clipboard/copy': {
        text: text as string,
        onSuccess: ['toast/info', { message: t('{what} copied', { what: what as string }) }],
        onFailure: ['toast/error', { message: t('Copying failed: select the text and copy it yourself') }],
      },
    }));
}
