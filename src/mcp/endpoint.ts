/**
 * `APP_URL/mcp`: MCP over Streamable HTTP, stateless, JSON answers (docs/mcp.md). In order: a
 * present `Origin` must be APP_URL's or one of ALLOWED_ORIGINS (403: DNS rebinding), then the
 * caller (401 with the `WWW-Authenticate` of RFC 9728 naming this resource's metadata), then POST
 * only (405), a supported `MCP-Protocol-Version` (400), a JSON body within BODY_LIMIT; then a new
 * server and transport answer it and are dropped.
 *
 * A mount, not a route group: MCP is a protocol of its own (JSON-RPC, its own error shape, its own
 * content negotiation), and the pipeline would log the request body as the call's `params` (tool
 * arguments in a log line), check the answer against a route schema and answer errors in the API's
 * shape. Each tool call goes through the pipeline as its route's own request (server.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyInstance } from 'fastify';
import type { Say } from '../http/app.js';
import { msg, phrase } from '../i18n/messages.js';
import type { Logger } from '../logging/logger.js';
import { authenticate, callerOf, type CallerDeps } from './caller.js';
import type { RequestOutcome, ToolRunner } from './server.js';

export const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

export interface EndpointDeps {
  caller: CallerDeps;
  runner: ToolRunner;
  log: Logger;
  /** the origins a browser's request may come from: APP_URL's and ALLOWED_ORIGINS */
  origins: ReadonlySet<string>;
  /** `APP_URL/.well-known/oauth-protected-resource/mcp` */
  metadataUrl: string;
  bodyLimit: number;
  /** the security headers of every answer */
  headers: Record<string, string>;
}

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

/** An answer in the shape the MCP SDK's transport gives its own HTTP errors. */
const rpcError = (status: number, code: number, message: string, headers?: Record<string, string>): Answer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }),
});

class TooLarge extends Error {}

/**
 * CORS for a browser-based MCP client on an allowed origin (APP_URL's or ALLOWED_ORIGINS): it may
 * read the answer and the headers an MCP client needs (the challenge, the protocol version).
 */
const corsHeaders = (origin: string): Record<string, string> => ({
  'access-control-allow-origin': origin,
  'access-control-expose-headers': 'www-authenticate, mcp-protocol-version, retry-after',
  vary: 'Origin',
});
const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': 'authorization, content-type, accept, mcp-protocol-version',
  'access-control-max-age': '600',
};

async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) throw new TooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new TooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The JSON-RPC methods of a message or batch, for the log entry. */
const methodsOf = (message: unknown): string[] =>
  [message]
    .flat()
    .flatMap((m) => (m && typeof m === 'object' && typeof (m as { method?: unknown }).method === 'string' ? [(m as { method: string }).method] : []));

/** The tools a message or batch calls, by name. */
const toolCallsOf = (message: unknown): string[] =>
  [message].flat().flatMap((m) => {
    const call = m as { method?: unknown; params?: { name?: unknown } } | null;
    return call?.method === 'tools/call' ? [typeof call.params?.name === 'string' ? call.params.name.slice(0, 64) : 'unknown'] : [];
  });

/** An `initialize` asking a version this server does not speak gets its latest (the protocol's negotiation), never an older one the SDK knows. */
function negotiated(message: unknown): unknown {
  const m = message as { method?: unknown; params?: { protocolVersion?: unknown } } | null;
  if (m?.method !== 'initialize' || !m.params || (PROTOCOL_VERSIONS as readonly unknown[]).includes(m.params.protocolVersion)) return message;
  return { ...m, params: { ...m.params, protocolVersion: PROTOCOL_VERSIONS[0] } };
}

export class McpEndpoint {
  constructor(private readonly deps: EndpointDeps) {}

  handle(req: IncomingMessage, res: ServerResponse, address: string, app: FastifyInstance, say: Say): void {
    const started = Date.now();
    const outcome: RequestOutcome = { called: [] };
    let logged: Record<string, unknown> = {};
    this.answer(req, address, app, outcome, say, (data) => (logged = { ...logged, ...data })).then(
      (answer) => this.send(res, answer, req.headers.origin),
      (err: Error) => {
        this.deps.log.error('mcp/failed', `The MCP request failed: ${err.message}`, { stack: err.stack });
        this.send(res, rpcError(500, -32603, say(msg('Internal error'))), req.headers.origin);
      },
    );
    res.on('finish', () => {
      // the methods and tool names only: never an argument
      this.deps.log.info('mcp/request', `${req.method} /mcp => ${res.statusCode}`, {
        status: res.statusCode,
        'saas.logging/ms': Date.now() - started,
        ...logged,
        ...(outcome.called.length ? { tools: outcome.called } : {}),
      });
    });
  }

  private send(res: ServerResponse, answer: Answer, origin: string | undefined): void {
    res.statusCode = answer.status;
    const cors = origin !== undefined && this.deps.origins.has(origin) ? corsHeaders(origin) : {};
    for (const [name, value] of Object.entries({ ...this.deps.headers, ...cors, ...answer.headers })) res.setHeader(name, value);
    res.end(answer.body);
  }

  private challenge(error?: string): string {
    return `Bearer ${error ? `error="${error}", ` : ''}resource_metadata="${this.deps.metadataUrl}"`;
  }

  private async answer(
    req: IncomingMessage,
    address: string,
    app: FastifyInstance,
    outcome: RequestOutcome,
    say: Say,
    log: (data: Record<string, unknown>) => void,
  ) {
    const origin = req.headers.origin;
    if (origin !== undefined && !this.deps.origins.has(origin)) return rpcError(403, -32000, say(msg('Forbidden: this Origin may not call the MCP server')));
    // a browser's preflight carries no credential: an allowed origin is told what it may send
    if (req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'])
      return { status: 204, headers: { ...corsHeaders(origin), ...PREFLIGHT_HEADERS }, body: '' };
    const auth = await authenticate(this.deps.caller, req.headers.authorization, address);
    if ('refuse' in auth)
      return {
        status: auth.refuse.status,
        headers: { 'content-type': 'application/json', ...auth.refuse.headers },
        body: JSON.stringify({ ...auth.refuse.body, message: say(auth.refuse.words(auth.refuse.body.message)) }),
      };
    if ('failure' in auth)
      return rpcError(401, -32001, say(auth.failure), { 'www-authenticate': this.challenge(auth.presented ? 'invalid_token' : undefined) });
    log({ caller: callerOf(auth.caller) });
    // from here the account's own language, when the caller is a person's grant
    const locale = auth.caller.kind === 'account' ? auth.caller.user.locale : undefined;
    const words = (w: Parameters<Say>[0]) => say(w, locale);
    // stateless: no stream to open (GET), no session to end (DELETE)
    if (req.method !== 'POST') return rpcError(405, -32000, words(msg('Method not allowed: the MCP server takes POST only (stateless)')), { allow: 'POST' });
    const version = req.headers['mcp-protocol-version'];
    if (version !== undefined && !(PROTOCOL_VERSIONS as readonly string[]).includes(String(version)))
      return rpcError(
        400,
        -32000,
        words(
          phrase('Bad Request: Unsupported protocol version: {version} (supported versions: {supported})', {
            version: String(version),
            supported: PROTOCOL_VERSIONS.join(', '),
          }),
        ),
      );
    let message: unknown;
    try {
      message = JSON.parse(await readBody(req, this.deps.bodyLimit));
    } catch (err) {
      return err instanceof TooLarge
        ? rpcError(413, -32000, words(phrase('Payload too large: at most {limit} bytes', { limit: this.deps.bodyLimit })))
        : rpcError(400, -32700, words(msg('Parse error: Invalid JSON')));
    }
    log({ methods: methodsOf(message) });
    return this.run(req, Array.isArray(message) ? message.map(negotiated) : negotiated(message), auth.caller, app, address, outcome, words);
  }

  private async run(
    req: IncomingMessage,
    message: unknown,
    caller: Parameters<ToolRunner['serverFor']>[0],
    app: FastifyInstance,
    address: string,
    outcome: RequestOutcome,
    words: (w: Parameters<Say>[0]) => string,
  ) {
    // a batch's calls are counted all at once, before any runs: past the limit nothing runs
    const wait = await this.deps.runner.admit(caller, toolCallsOf(message));
    if (wait !== undefined)
      return rpcError(429, -32000, words(phrase('Too many tool calls: at most MCP_LIMIT a minute per grant or key; try again in {wait} s', { wait })), {
        'retry-after': String(wait),
      });
    const userAgent = req.headers['user-agent'];
    const acceptLanguage = req.headers['accept-language'];
    const client = {
      address,
      userAgent: typeof userAgent === 'string' ? userAgent : undefined,
      acceptLanguage: typeof acceptLanguage === 'string' ? acceptLanguage : undefined,
      say: words,
    };
    const server = this.deps.runner.serverFor(caller, app, client, outcome);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const headers = new Headers();
      for (const name of ['accept', 'content-type', 'mcp-protocol-version']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers.set(name, value);
      }
      const response = await transport.handleRequest(new Request(this.deps.caller.resource, { method: 'POST', headers }), { parsedBody: message });
      const body = await response.text();
      if (outcome.missingScope && caller.kind === 'account') {
        const scopes = [...new Set([...caller.user.oauth.scopes, outcome.missingScope])].join(' ');
        const text = words(phrase('This tool needs the scope {scope}: ask the person to allow it', { scope: outcome.missingScope }));
        return rpcError(403, -32003, text, {
          'www-authenticate': `Bearer error="insufficient_scope", scope="${scopes}", resource_metadata="${this.deps.metadataUrl}"`,
        });
      }
      return { status: response.status, headers: Object.fromEntries(response.headers.entries()), body };
    } finally {
      await server.close();
    }
  }
}
