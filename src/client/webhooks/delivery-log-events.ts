/**
 * The Webhooks page's delivery log: one endpoint's deliveries with every attempt, filtered by
 * status, paged with the server's cursor, and a finished delivery retried. The page and its
 * endpoints are webhooks/events.ts's; `webhooks/test` there opens this log after a test.
 */
import type { EventCore } from '../core.js';
import type { AppState } from '../shell/state.js';
import { type DeliveryFilter, pageOf, type WebhookDelivery, withPage } from './events.js';
import { t } from '../i18n/words.js';

export function registerDeliveryLog(core: EventCore<AppState>): void {
  core
    .regEvent('webhooks/show-log', ({ state }, [, webhookId, filter]) => {
      const page = state.webhooksPage;
      if (!page) return;
      const f = (filter ?? '') as DeliveryFilter;
      const same = page.log !== undefined && page.log.webhookId === webhookId && page.log.filter === f;
      return {
        db: withPage(state, { ...page, log: { webhookId: webhookId as string, filter: f, items: same ? page.log!.items : undefined, nextCursor: null } }),
        dispatch: ['webhooks/load-log', page.orgId, webhookId, f, null],
      };
    })
    .regEvent('webhooks/hide-log', ({ state }) => {
      const page = state.webhooksPage;
      if (!page) return;
      return { db: withPage(state, { ...page, log: undefined }) };
    })
    .regEvent('webhooks/load-log', (_ctx, [, orgId, webhookId, filter, cursor]) => {
      const queryParams = { limit: 20, ...(filter ? { status: filter as string } : {}), ...(cursor ? { cursor: cursor as string } : {}) };
      return {
        'http/auth-api': {
          url: `orgs/${orgId}/webhooks/${webhookId}/deliveries`,
          queryParams,
          onSuccess: ['webhooks/log-loaded', orgId, webhookId, filter, cursor],
          onFailure: ['request/failed'],
        },
      };
    })
    .regEvent('webhooks/log-loaded', ({ state }, [, orgId, webhookId, filter, cursor, body]) => {
      const page = pageOf(state, orgId);
      const log = page?.log;
      // an answer for a log no longer shown (another endpoint or filter) is dropped
      if (!page || !log || log.webhookId !== webhookId || log.filter !== filter) return;
      const b = body as { deliveries: WebhookDelivery[]; 'next-cursor': string | null };
      const items = cursor ? [...(log.items ?? []), ...b.deliveries] : b.deliveries;
      return { db: withPage(state, { ...page, log: { ...log, items, nextCursor: b['next-cursor'] } }) };
    })
    .regEvent('webhooks/more', ({ state }) => {
      const page = state.webhooksPage;
      const log = page?.log;
      if (!page || !log?.nextCursor) return;
      return { dispatch: ['webhooks/load-log', page.orgId, log.webhookId, log.filter, log.nextCursor] };
    })
    .regEvent('webhooks/retry', ({ state }, [, deliveryId]) => {
      const page = state.webhooksPage;
      const log = page?.log;
      if (!page || !log) return;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/webhooks/${log.webhookId}/deliveries/${deliveryId}/retry`,
          method: 'post',
          onSuccessN: [['app/idle'], ['toast/info', { message: t('Retry sent') }], ['webhooks/show-log', log.webhookId, log.filter]],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    });
}
