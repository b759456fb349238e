/**
 * What a route's data says in the OpenAPI document: its description sentences (role, plan,
 * limit, verified email, re-authentication), the error answers it can give beside its own
 * (400 for input, 401 for auth, 402 for its plan or limit, 403 for its gates, 414, 431, 500),
 * its content types, `x-` extensions and security. Registering a route (routes.ts) hands this
 * to Fastify as the route's schema; validation never reads it (the pipeline checks responses
 * against `schemas.response`).
 */
import type { TSchema } from 'typebox';
import { FORMATS } from './formats.js';
import type { OrgRole } from './org-access.js';
import { featureSentence, planList, plansSentence } from './plan-gate.js';
import { REAUTH_MAX_AGE_SECONDS, resolved, type AuthRequirement, type Route, type RouteGroup } from './route-definition.js';
import { limitSentence } from './usage-gate.js';

/** The router's longest path parameter (app.ts `maxParamLength`): a longer segment matches no route. */
export const MAX_PARAM_LENGTH = 200;

/** The longest request target the pipeline answers (http/pipeline.ts `MAX_URL_LENGTH`), for the documents' 414. */
const URL_LIMIT = 8192;

const CONTENT_TYPES = FORMATS.map((f) => f.mime);
const REQUEST_CONTENT_TYPES = [...CONTENT_TYPES, 'application/x-www-form-urlencoded'];

const errorRef = { $ref: 'error#' };

export const reauthField = (r: Pick<Route, 'reauth'>) => (typeof r.reauth === 'object' ? (r.reauth.passwordField ?? 'password') : 'password');

const ROLE_SENTENCE: Record<OrgRole, string> = {
  member: 'Needs membership of the organization (any role).',
  admin: 'Needs the role `admin` or `owner` in the organization.',
  owner: 'Needs the role `owner` in the organization.',
};

const REAUTH_SENTENCE = (field: string) =>
  "Needs re-authentication: the account's password in `" +
  field +
  '`, or, for an account without a ' +
  `password, a sign-in within the last ${REAUTH_MAX_AGE_SECONDS / 60} minutes (403 \`reauthentication-required\` otherwise; a wrong password is 403 \`forbidden\`).`;
const VERIFIED_SENTENCE = 'Needs a verified email address (403 `email-not-verified`).';

/**
 * Whether a body schema can be sent as a form: every field a scalar (a form has only flat
 * text fields; `user[password]` is one key). Nested objects and lists are offered in the three
 * structured formats only.
 */
function isFlat(schema: TSchema | undefined): boolean {
  const body = resolved(schema) as { properties?: Record<string, TSchema> } | undefined;
  const scalar = (s: TSchema | undefined): boolean => {
    const r = resolved(s) as { type?: string | string[]; anyOf?: TSchema[]; oneOf?: TSchema[]; $ref?: string } | undefined;
    if (!r) return true;
    if (r.anyOf ?? r.oneOf) return (r.anyOf ?? r.oneOf)!.every(scalar);
    const types = Array.isArray(r.type) ? r.type : r.type ? [r.type] : [];
    return r.$ref === undefined && types.every((t) => t !== 'object' && t !== 'array');
  };
  return Object.values(body?.properties ?? {}).every(scalar);
}

/** What registration decided about a route that its document shows. */
export interface DocumentedRoute {
  auth: AuthRequirement;
  platformAdmin: boolean;
  /** the meter whose hard limit closes it */
  limit: string | undefined;
}

/**
 * The route's answers as documented: its own (or what `docs.response` shows instead), then the
 * error answers its data implies, each only where the route does not declare that status itself.
 */
function documentedResponses(r: Route, { auth, platformAdmin, limit }: DocumentedRoute, group: RouteGroup): Record<string, unknown> {
  const responses = r.schemas.response;
  const documented: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(responses)) {
    documented[status] = r.docs?.response?.[Number(status)] ?? (schema === null ? { type: 'null', description: 'No content' } : schema);
  }
  const addError = (status: number, description: string) => {
    if (!(status in responses)) documented[status] = { ...errorRef, description };
  };
  /** adds a refusal to the 403's description: `first` before what is there, else after it */
  const add403 = (sentence: string, first = false) => {
    const existing = documented[403] as { description?: string } | undefined;
    const description = existing?.description ? (first ? `${sentence}; ${existing.description}` : `${existing.description}; or ${sentence}`) : sentence;
    documented[403] = { ...errorRef, ...existing, description };
  };
  if (r.schemas.body || r.schemas.querystring || r.schemas.params) addError(400, 'Malformed body or request coercion failed');
  // what every route may answer before its own checks: the pipeline's limits and the CSRF and origin checks
  addError(414, `\`uri-too-long\`: the request target is over ${URL_LIMIT} characters (or a path segment over ${MAX_PARAM_LENGTH})`);
  addError(431, '`headers-too-large`: the header section is over 16 KiB');
  if (auth === 'required') addError(401, r.apiKeys ? 'Missing, invalid or expired access token or API key' : 'Missing, invalid or expired access token');
  if (r.orgRole) {
    addError(403, "The caller's role in the organization is below the one the route needs");
    addError(404, 'No such organization, or the caller is not a member');
  }
  const gates402 = [
    r.requires &&
      ('feature' in r.requires
        ? `\`payment-required\` (with \`feature\` and \`plans\`): the organization's plan lacks the feature \`${r.requires.feature}\``
        : `\`payment-required\` (with \`plans\`): the organization has no active or trialing subscription on ${planList(r.requires.plans)}`),
    limit && `\`usage-limit\` (with \`meter\`, \`limit\`, \`used\`): the organization reached its plan's hard limit of \`${limit}\` this billing period`,
  ].filter(Boolean);
  if (gates402.length > 0) addError(402, gates402.join('; or '));
  if (platformAdmin) addError(404, 'Not a platform admin, or not signed in: the answer of a path without a route');
  if (r.impersonation === 'forbidden') addError(403, '`impersonation-forbidden`: an impersonated session may not do this');
  if (typeof r.impersonation === 'object') {
    const { field, values } = r.impersonation.forbiddenWhen;
    addError(403, `\`impersonation-forbidden\`: an impersonated session may not send \`${field}\` ${values.map((v) => `\`${v}\``).join(' or ')}`);
  }
  if (auth !== 'none' && !(403 in responses)) {
    // beside the route's other refusals (its role, impersonation), never in place of them
    add403(
      r.scopes
        ? "`insufficient-scope` (with `scopes`): an OAuth access token without one of the route's scopes"
        : '`insufficient-scope`: an OAuth access token (this route takes none)',
    );
  }
  if (r.apiKeys) addError(429, 'Too many API key lookups that found no live key from this address (`rate-limited`, with Retry-After)');
  if (r.verifiedEmail || r.reauth) {
    const checks = [
      r.verifiedEmail && "`email-not-verified`: the account's address is not verified yet",
      r.reauth && '`reauthentication-required`, or `forbidden` for a wrong password',
    ]
      .filter(Boolean)
      .join('; ');
    add403(checks, true);
  }
  if (r.reauth) addError(429, 'Too many wrong passwords (`rate-limited`, with Retry-After)');
  if (r.method !== 'GET' && r.csrf !== false && isApiPrefix(group.prefix)) {
    const csrf =
      '`forbidden` with `reason: origin` (Origin or Referer names another site), `cross-site` (Sec-Fetch-Site) or `csrf` ' +
      '(a cookie-bearing request without a valid X-CSRF-Token)';
    const existing = documented[403] as { description?: string } | undefined;
    documented[403] = existing
      ? { ...existing, description: `${existing.description ?? "The route's own refusal (see its description)"}; or ${csrf}` }
      : { ...errorRef, description: csrf };
  }
  addError(500, 'Unexpected error (`exception`) or a response that broke its schema (`response-coercion`)');
  return documented;
}

export const isApiPrefix = (prefix: string) => prefix === '/api' || prefix.startsWith('/api/');

/** The route's schema as Fastify takes it: what @fastify/swagger turns into the route's operation. */
export function documentedSchema(r: Route, decided: DocumentedRoute, group: RouteGroup): Record<string, unknown> {
  const { auth, platformAdmin, limit } = decided;
  const description =
    [
      r.description,
      r.orgRole && ROLE_SENTENCE[r.orgRole],
      r.requires && ('feature' in r.requires ? featureSentence(r.requires.feature) : plansSentence(r.requires.plans)),
      limit && limitSentence(limit),
      r.verifiedEmail && VERIFIED_SENTENCE,
      r.reauth && (typeof r.reauth === 'object' && r.reauth.whenText ? `${r.reauth.whenText}: ` : '') + REAUTH_SENTENCE(reauthField(r)),
    ]
      .filter(Boolean)
      .join(' ') || undefined;
  return {
    summary: r.summary,
    description,
    ...(r.orgRole ? { 'x-org-role': r.orgRole } : {}),
    ...(r.requires && 'plans' in r.requires ? { 'x-requires-plans': [...r.requires.plans] } : {}),
    ...(r.requires && 'feature' in r.requires ? { 'x-requires-feature': r.requires.feature } : {}),
    ...(r.scopes ? { 'x-oauth-scopes': [...r.scopes] } : {}),
    ...(limit ? { 'x-usage-limit': limit } : {}),
    ...(r.verifiedEmail ? { 'x-verified-email': true } : {}),
    ...(r.reauth ? { 'x-reauthentication': { 'password-field': reauthField(r), 'recent-sign-in-seconds': REAUTH_MAX_AGE_SECONDS } } : {}),
    ...(platformAdmin ? { 'x-platform-admin': true } : {}),
    tags: [...(group.tags ?? []), ...(r.tags ?? [])],
    ...(r.schemas.params ? { params: r.schemas.params } : {}),
    ...(r.schemas.querystring ? { querystring: r.schemas.querystring } : {}),
    ...(r.schemas.body
      ? { body: r.schemas.body, consumes: r.rawBody ? ['application/json'] : isFlat(r.schemas.body) ? REQUEST_CONTENT_TYPES : CONTENT_TYPES }
      : {}),
    produces: CONTENT_TYPES,
    response: documentedResponses(r, decided, group),
    ...(auth === 'required'
      ? { security: [{ bearerAuth: [] }, ...(r.apiKeys ? [{ apiKeyAuth: [] }] : []), ...(r.scopes ? [{ oauth: [...r.scopes] }] : [])] }
      : {}),
    // optional: anonymous, or either credential (the query endpoint: each kind says what it needs)
    ...(auth === 'optional' && r.apiKeys ? { security: [{}, { bearerAuth: [] }, { apiKeyAuth: [] }] } : {}),
  };
}
