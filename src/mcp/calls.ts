/**
 * What each tool call leaves behind and may spend (docs/mcp.md, "Limits, audit entries, metrics"):
 * - `MCP_LIMIT` calls a minute per grant (an OAuth token's `sid`) or per API key, counted like every
 *   other limit (Redis across instances), a batch's calls all before any runs; beyond it the MCP
 *   request is HTTP 429 with `Retry-After` and runs nothing;
 * - the audit entry `mcp.tool-called` `{client-id, tool, outcome, ms}`: in the account's own log,
 *   and in the organization's for an organization's tool the account is a member of; an API key's
 *   call in its organization's log with the key as the actor. Never an argument;
 * - the counter `saas_mcp_tool_calls_total{tool, outcome}`.
 *
 * The route's own change commits with its own audit entries; this entry follows it. When it cannot
 * be written (the database is away: the route then failed too) the call is still answered, and the
 * error log says which tool and caller, never the arguments.
 */
import { sql } from 'kysely';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { appendAccountAudit, appendAudit } from '../audit/log.js';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { type CallClient, callerOf, type McpCaller } from './caller.js';
import { ORGANIZATION_ARGUMENT, type Tool } from './tools.js';

export const TOOL_CALLED = 'mcp.tool-called';

/** How a call ended: `ok`, or the API's error type (`forbidden`, `not-found`, `request-coercion`, `insufficient-scope`, …). */
export type CallOutcome = string;

export interface ToolCallRecord {
  tool: Tool;
  caller: McpCaller;
  outcome: CallOutcome;
  ms: number;
  args: Record<string, unknown>;
  client: CallClient;
}

export interface ToolCallsDeps {
  db: DB;
  log: Logger;
  /** MCP_LIMIT's counter; null: unlimited */
  limiter: RateLimiterAbstract | null;
  /** counts a call by tool and outcome (metrics) */
  counted?(tool: string, outcome: CallOutcome): void;
}

/** The counter's key: the grant behind a token (every token of it shares its calls), or the key. */
const limitKey = (caller: McpCaller) => (caller.kind === 'account' ? `grant:${caller.user.sessionId}` : `key:${caller.key.id}`);

export class ToolCalls {
  constructor(private readonly deps: ToolCallsDeps) {}

  /**
   * Takes a request's `calls` (a batch's every `tools/call`, counted before any runs) from the
   * caller's MCP_LIMIT: the seconds to wait when they do not fit. A refused request runs none of
   * them and writes no audit entry (its calls are counted in the metric as `rate-limited`).
   */
  async admit(caller: McpCaller, calls: readonly string[]): Promise<number | undefined> {
    if (!this.deps.limiter || calls.length === 0) return undefined;
    try {
      await this.deps.limiter.consume(limitKey(caller), calls.length);
      return undefined;
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      for (const tool of calls) this.deps.counted?.(tool, 'rate-limited');
      return Math.max(1, Math.ceil(err.msBeforeNext / 1000));
    }
  }

  async record(call: ToolCallRecord): Promise<void> {
    const { tool, caller, outcome, ms, client } = call;
    const name = tool.listing.name;
    this.deps.counted?.(name, outcome);
    const origin = { ip: client.address, userAgent: client.userAgent ?? null };
    const target = { type: 'mcp-tool', id: name };
    try {
      if (caller.kind === 'api-key') {
        await appendAudit(this.deps.db, {
          action: TOOL_CALLED,
          organizationId: caller.key.organizationId,
          actor: { apiKeyId: caller.key.id },
          target,
          details: { tool: name, outcome, ms },
          origin,
        });
        return;
      }
      const accountId = caller.user.id;
      const details = { 'client-id': caller.user.oauth.clientId, tool: name, outcome, ms };
      await appendAccountAudit(this.deps.db, { action: TOOL_CALLED, accountId, target, details, origin });
      const organizationId = tool.pathParams.some((p) => p.argument === ORGANIZATION_ARGUMENT) ? call.args[ORGANIZATION_ARGUMENT] : undefined;
      // an organization's log takes the calls of its members only: a stranger's refused call is theirs alone
      if (typeof organizationId !== 'string') return;
      const member = await this.deps.db
        .selectFrom('membership')
        .select('organization_id')
        .where('account_id', '=', accountId)
        // compared as text: an argument that is not a uuid is simply no membership
        .where(sql<string>`organization_id::text`, '=', organizationId)
        .executeTakeFirst();
      if (member)
        await appendAudit(this.deps.db, {
          action: TOOL_CALLED,
          organizationId: member.organization_id,
          accountId,
          actor: { accountId },
          target,
          details,
          origin,
        });
    } catch (err) {
      this.deps.log.error('mcp/audit-failed', `The audit entry of a call of ${name} could not be written: ${(err as Error).message}`, {
        tool: name,
        outcome,
        ...callerOf(caller),
      });
    }
  }
}
