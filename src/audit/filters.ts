/**
 * The audit log's filters (docs/audit.md, "Reading"): the page, its query kind and the export
 * take the same ones: `action` (repeated), `actor-id` (an account or an API key), `target-type`,
 * `target-id`, `from` (inclusive) and `to` (exclusive), ISO 8601 date-times with a zone.
 */
import { Type, type Static } from 'typebox';
import { requestCoercion } from '../http/errors.js';

export const AuditLogFilterProperties = {
  action: Type.Optional(
    Type.Array(Type.String({ pattern: '^[a-z0-9-]+(\\.[a-z0-9-]+)+$', maxLength: 100 }), {
      maxItems: 50,
      description: 'only these actions (repeat the parameter for several), e.g. `org.member-removed`',
    }),
  ),
  'actor-id': Type.Optional(Type.String({ format: 'uuid', description: 'only what this account or API key did' })),
  'target-type': Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'only entries on this kind of target (`account`, `api-key`, ...)' })),
  'target-id': Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'only entries on this target' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or after this instant (ISO 8601 with a zone)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'entries before this instant (ISO 8601 with a zone)' })),
};

const Filters = Type.Object(AuditLogFilterProperties);
export type AuditLogFilterInput = Static<typeof Filters>;

/** The filters, checked and parsed: what the queries apply. */
export interface AuditLogFilters {
  actions?: readonly string[];
  actorId?: string;
  targetType?: string;
  targetId?: string;
  from?: Date;
  to?: Date;
}

/** The parsed filters; a period that ends before it starts is a 400 naming `to`. */
export function auditLogFilters(input: AuditLogFilterInput, place: 'query' | 'body'): AuditLogFilters {
  const from = input.from === undefined ? undefined : new Date(input.from);
  const to = input.to === undefined ? undefined : new Date(input.to);
  for (const [name, date] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (date && Number.isNaN(date.getTime())) throw requestCoercion(place, [{ path: `/${name}`, message: 'must be an ISO 8601 date-time' }]);
  }
  if (from && to && to.getTime() <= from.getTime()) throw requestCoercion(place, [{ path: '/to', message: 'must be later than from' }]);
  return {
    ...(input.action && input.action.length > 0 ? { actions: [...new Set(input.action)] } : {}),
    ...(input['actor-id'] ? { actorId: input['actor-id'] } : {}),
    ...(input['target-type'] ? { targetType: input['target-type'] } : {}),
    ...(input['target-id'] ? { targetId: input['target-id'] } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
  };
}

/** The filters in words, for the export's audit entry (flat facts only). */
export function describeFilters(filters: AuditLogFilters): Record<string, string> {
  return {
    ...(filters.actions ? { actions: filters.actions.join(' ') } : {}),
    ...(filters.actorId ? { 'actor-id': filters.actorId } : {}),
    ...(filters.targetType ? { 'target-type': filters.targetType } : {}),
    ...(filters.targetId ? { 'target-id': filters.targetId } : {}),
    ...(filters.from ? { from: filters.from.toISOString() } : {}),
    ...(filters.to ? { to: filters.to.toISOString() } : {}),
  };
}
