/**
 * One MCP server per request (stateless: nothing is kept between requests, so any instance answers
 * any request): `tools/list` lists the tools the caller may call, `tools/call` runs the tool's route.
 * A call is the route's own HTTP request made in-process with `app.inject`, the caller's credential
 * attached (its API key as it came, or an in-process credential naming the token's account with its
 * scopes: src/auth/in-process-callers.ts), so every gate of the route runs once, in the order it
 * runs over HTTP, and its audit entries, webhook events and log entry are the route's own.
 */
import type { Words } from '../http/errors.js';
import { msg, phrase } from '../i18n/messages.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { InProcessCallers } from '../auth/in-process-callers.js';
import type { ErrorBody } from '../http/errors.js';
import { currentContext, runWithContext, type LogContext } from '../logging/context.js';
import type { Logger } from '../logging/logger.js';
import type { CallOutcome, ToolCalls } from './calls.js';
import { type CallClient, mayCall, type McpCaller } from './caller.js';

export type { CallClient } from './caller.js';
import { toRequest, type Tool } from './tools.js';

export interface ServerDeps {
  name: string;
  version: string;
  instructions: string;
  tools(): ReadonlyMap<string, Tool>;
  inProcess: InProcessCallers;
  log: Logger;
  /** each call's limit, audit entry and count */
  calls: ToolCalls;
}

/** What one request's calls found: a missing scope, answered as HTTP 403 on the request itself (MCP's step-up). */
export interface RequestOutcome {
  /** the scope a call needed and the token did not hold */
  missingScope?: string;
  /** the tools called, by name (for the request's log entry; never their arguments) */
  called: string[];
}

// only elicitation uses it, which this server never asks: one for every request
const validator = new AjvJsonSchemaValidator();

const errorResult = (body: unknown): CallToolResult => ({ isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] });

/** The answer's JSON; undefined for an empty body (204) or one that is not JSON. */
function parsed(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A 400 about path parameters names them as the tool's arguments (`organization-id`, not `id`). */
/** A refusal built here (a tool's arguments), its message and field reasons in the caller's words. */
function inWords(body: ErrorBody, say: (words: Words) => string): ErrorBody {
  const errors = Array.isArray(body.errors)
    ? (body.errors as Array<{ path: string; message: string }>).map((e) => ({ ...e, message: say(e.message) }))
    : undefined;
  return { ...body, message: say(body.message), ...(errors ? { errors } : {}) };
}

function asArguments(tool: Tool, body: ErrorBody): ErrorBody {
  if (body.type !== 'request-coercion' || body.in !== 'path' || !Array.isArray(body.errors)) return body;
  const renamed = (path: string) => tool.pathParams.reduce((p, { param, argument }) => (p === `/${param}` ? `/${argument}` : p), path);
  return { ...body, errors: (body.errors as Array<{ path: string }>).map((e) => ({ ...e, path: renamed(e.path) })) };
}

/**
 * The log context of a call's route request: its own (an in-process request has none from the
 * server factory, and would otherwise write its caller and params into the MCP request's), naming
 * the MCP request it serves.
 */
function callContext(method: string, url: string): LogContext {
  const outer = currentContext();
  return {
    'req-id': randomUUID(),
    'request-method': method.toLowerCase(),
    uri: url.split('?')[0],
    ...(outer?.['server-name'] ? { 'server-name': outer['server-name'] } : {}),
    ...(outer?.['req-id'] ? { 'mcp-req-id': outer['req-id'] } : {}),
  };
}

export class ToolRunner {
  constructor(private readonly deps: ServerDeps) {}

  /** MCP_LIMIT for a request's tool calls (their names): the seconds to wait when they do not fit. */
  admit(caller: McpCaller, tools: readonly string[]): Promise<number | undefined> {
    // a name no tool has is `unknown` in the metric: a caller cannot make new label values
    const known = this.deps.tools();
    return this.deps.calls.admit(
      caller,
      tools.map((name) => (known.has(name) ? name : 'unknown')),
    );
  }

  /**
   * A server for one request of `caller`; `outcome` collects what its calls found. `client`: the
   * MCP request's address and user agent, which its calls' routes see as theirs (rate limits,
   * audit entries).
   */
  serverFor(caller: McpCaller, app: FastifyInstance, client: CallClient, outcome: RequestOutcome): Server {
    const { deps } = this;
    const server = new Server(
      { name: deps.name, version: deps.version },
      { capabilities: { tools: {} }, instructions: deps.instructions, jsonSchemaValidator: validator },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [...deps.tools().values()].filter((t) => mayCall(caller, t)).map((t) => t.listing),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tool = deps.tools().get(request.params.name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, client.say(phrase('Unknown tool: {name}', { name: request.params.name })));
      outcome.called.push(tool.listing.name);
      const args = request.params.arguments ?? {};
      const started = performance.now();
      const { result, ended } = await this.call(tool, args, caller, app, client, outcome);
      await deps.calls.record({ tool, caller, outcome: ended, ms: Math.round(performance.now() - started), args, client });
      return result;
    });
    return server;
  }

  /** Runs the call's route: its result, and how it ended (`ok` or the API's error type). */
  private async call(
    tool: Tool,
    args: Record<string, unknown>,
    caller: McpCaller,
    app: FastifyInstance,
    client: CallClient,
    outcome: RequestOutcome,
  ): Promise<{ result: CallToolResult; ended: CallOutcome }> {
    const built = toRequest(tool, args);
    if ('refused' in built) return { result: errorResult(inWords(built.refused, client.say)), ended: built.refused.type };
    const { method, url, body } = built;
    // the callback form dispatches at once, inside the call's own log context (the promise form
    // would dispatch when awaited, in the MCP request's)
    const run = (authorization: string) =>
      new Promise<LightMyRequestResponse>((resolve, reject) =>
        runWithContext(callContext(method, url), () =>
          app.inject(
            {
              method,
              url,
              remoteAddress: client.address,
              headers: {
                authorization,
                accept: 'application/json',
                ...(client.userAgent ? { 'user-agent': client.userAgent } : {}),
                ...(client.acceptLanguage ? { 'accept-language': client.acceptLanguage } : {}),
                ...(body ? { 'content-type': 'application/json' } : {}),
              },
              ...(body ? { payload: JSON.stringify(body) } : {}),
            },
            (err, res) => (err || !res ? reject(err ?? new Error('No answer')) : resolve(res)),
          ),
        ),
      );
    try {
      const res =
        caller.kind === 'account'
          ? await this.deps.inProcess.as(caller.user, method, url, (credential) => run(`Bearer ${credential}`))
          : await run(`Bearer ${caller.credential}`);
      const answer = parsed(res.body);
      if (res.statusCode >= 200 && res.statusCode < 300) {
        const structured = answer !== null && typeof answer === 'object' && !Array.isArray(answer) ? (answer as Record<string, unknown>) : undefined;
        return {
          result: { ...(structured ? { structuredContent: structured } : {}), content: [{ type: 'text' as const, text: res.body === '' ? '{}' : res.body }] },
          ended: 'ok',
        };
      }
      const error = (answer ?? { type: 'error', message: client.say(phrase('The route answered {status}', { status: res.statusCode })) }) as ErrorBody;
      if (res.statusCode === 403 && error.type === 'insufficient-scope' && caller.kind === 'account')
        outcome.missingScope = (error.scopes as string[] | undefined)?.[0] ?? tool.scopes[0];
      return { result: errorResult(asArguments(tool, error)), ended: typeof error.type === 'string' ? error.type : 'error' };
    } catch (err) {
      // the route's own failures are its answers (a 500 in the API's shape); this is the call itself failing
      this.deps.log.error('mcp/call-failed', `The tool ${tool.listing.name} could not run: ${(err as Error).message}`, { tool: tool.listing.name });
      return { result: errorResult({ type: 'internal-error', message: client.say(msg('The tool could not run')) }), ended: 'internal-error' };
    }
  }
}
