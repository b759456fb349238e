/** `POST /api/webhooks/:provider`: the raw body goes to the provider's verification untouched. */
import { Type } from 'typebox';
import { ErrorBody } from '../http/errors.js';
import { ref, route, type RouteGroup } from '../http/routes.js';
import type { PaymentService } from './service.js';

export const WebhookReceipt = Type.Object(
  { received: Type.Literal(true), duplicate: Type.Boolean({ description: 'true when this event id was already received' }) },
  { $id: 'webhook-receipt', additionalProperties: false },
);

export function paymentRoutes(payments: PaymentService): RouteGroup {
  return {
    prefix: '/api/webhooks',
    tags: ['Payments'],
    auth: 'none',
    routes: [
      route({
        method: 'POST',
        path: '/:provider',
        summary: 'Payment provider webhook',
        description:
          `Receives a provider's event. The raw body is verified against the provider's signature ` +
          `(Stripe: \`Stripe-Signature\`) before anything is parsed; each event is stored once by id and applied in ` +
          `the same transaction. Providers: ${payments.providerNames.join(', ')}.`,
        rawBody: true,
        csrf: false,
        schemas: {
          params: Type.Object({ provider: Type.String({ maxLength: 50 }) }),
          response: { 200: ref(WebhookReceipt), 404: ref(ErrorBody) },
        },
        async handler({ parameters, request }) {
          const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
          return payments.receive(parameters.path.provider, raw, request.headers);
        },
      }),
    ],
  };
}
