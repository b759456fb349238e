/**
 * The product as an MCP server (docs/mcp.md): `POST APP_URL/mcp`, MCP over Streamable HTTP for
 * agents acting for a person (an OAuth token issued for `APP_URL/mcp`) or for an organization (its
 * API key). Its tools are the routes whose data declares `tool`, read once every module started;
 * a call runs its route with every gate. Stateless: any instance answers any request.
 */
import { authModule } from '../auth/module.js';
import { apiSecurityHeaders } from '../http/security-headers.js';
import { productModule } from '../product/module.js';
import { counter } from '../http/rate-limit.js';
import { defineModule } from '../runtime/module.js';
import { rateLimit } from '../runtime/settings.js';
import { ToolCalls } from './calls.js';
import { mcpResourceOf } from '../shared/oauth-scopes.js';
import { McpEndpoint } from './endpoint.js';
import { ToolRunner } from './server.js';
import { toolsOf, type Tool } from './tools.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { MCP_MESSAGES } from './messages/index.js';

export const mcpModule = defineModule({
  name: 'mcp',
  declares: { [MESSAGES_KEY]: [MCP_MESSAGES] },
  settings: (env) => ({
    // an agent in a loop is stopped here; a person's assistant makes a few calls a minute
    limit: rateLimit(env, 'MCP_LIMIT', { count: 300, seconds: 60 }),
  }),
  start(ctx, settings) {
    const { config } = ctx;
    const log = ctx.logs.logger('saas.mcp');
    const auth = ctx.use(authModule);
    const product = ctx.use(productModule);
    let tools: ReadonlyMap<string, Tool> = new Map();
    const calls = ctx.metrics?.counter('saas_mcp_tool_calls_total', 'MCP tool calls, by tool and outcome (ok, or the API error type)', ['tool', 'outcome']);
    const runner = new ToolRunner({
      name: product.name,
      version: config.version,
      instructions:
        `${product.name}: ${product.pitch} The tools act as the person who connected this assistant (or as an organization's API key), ` +
        'with exactly what that person may do in the product: their organizations, roles and plan decide, and a refusal says why.',
      tools: () => tools,
      inProcess: auth.inProcessCallers,
      log,
      calls: new ToolCalls({
        db: ctx.db,
        log,
        limiter: counter('mcp-calls', settings.limit, ctx.limiterStore),
        counted: (tool, outcome) => calls?.inc({ tool, outcome }),
      }),
    });
    const resource = mcpResourceOf(config.appUrl);
    const endpoint = new McpEndpoint({
      caller: { tokens: auth.accessTokens, keys: () => auth.apiKeyCheck(), resource },
      runner,
      log,
      origins: new Set([new URL(config.appUrl).origin, ...config.allowedOrigins.map((o) => new URL(o).origin)]),
      metadataUrl: `${config.appUrl}/.well-known/oauth-protected-resource/mcp`,
      bodyLimit: config.bodyLimit,
      headers: apiSecurityHeaders(config.secureCookies),
    });
    return {
      services: { tools: () => tools },
      mounts: [{ urls: ['/mcp'], handle: (req, res, address, app, say) => endpoint.handle(req, res, address, app, say) }],
      // every module's routes are known now: a tool's schemas that do not fit fail the start
      ready(app) {
        tools = toolsOf(app.routeGroups, app.schemas);
      },
    };
  },
});
