/**
 * Usage limits as route data (docs/billing.md, "Limits as route data"): `limit: "<meter>"` on a
 * route answers 402 `usage-limit` once the organization's usage of the meter in its billing
 * period reached the plan's hard limit. Every route an API key may call (`apiKeys`) carries
 * `limit: "api-calls"` for requests made with a key: such a request counts 1 for the key's
 * organization, unless it is refused for the limit. This layer knows no plan: the gate (one
 * module provides it: billing) decides and counts; routes.ts wires it in after the role and
 * plan checks.
 */
import type { FastifyRequest } from 'fastify';

/** The meter of requests made with an organization's API key: the limit every `apiKeys` route carries. */
export const API_CALLS_METER_ID = 'api-calls';

/** What decides a `limit` route. */
export interface UsageGate {
  /**
   * Throws the 402 `usage-limit` when the organization (the path's, or for `api-calls` the
   * key's) has reached the meter's hard limit this period; for `api-calls` with a key, counts
   * the request. `organizationId` is the path's, when the route names one.
   */
  admit(request: FastifyRequest, meter: string, organizationId: string | undefined): Promise<void>;
  /** the meters the gate knows (start-up refuses a `limit` naming another) */
  meters(): readonly string[];
}

/** The meter a route is limited by: its own `limit`, else `api-calls` on a route that takes keys. */
export function limitOf(route: { limit?: string; apiKeys?: boolean }): string | undefined {
  return route.limit ?? (route.apiKeys ? API_CALLS_METER_ID : undefined);
}

export const limitSentence = (meter: string) =>
  meter === API_CALLS_METER_ID
    ? "A request made with an API key counts as one `api-calls` for its organization; past the plan's hard limit of the billing period, 402 `usage-limit`."
    : `Past the plan's hard limit of \`${meter}\` in the billing period, 402 \`usage-limit\`.`;

/** The preHandler of a limited route. */
export function usageCheck(gate: UsageGate, meter: string, param: string | undefined) {
  return async (request: FastifyRequest): Promise<void> => {
    const organizationId = param ? (request.params as Record<string, string>)[param] : undefined;
    await gate.admit(request, meter, organizationId);
  };
}
