/** Query kinds of the payments module. */
import { Type } from 'typebox';
import { queryKind } from '../http/queries.js';
import type { PaymentService } from './service.js';

export const PaymentEventsPage = Type.Object(
  {
    events: Type.Array(
      Type.Object({ id: Type.String(), type: Type.String(), 'created-at': Type.String({ format: 'date-time' }) }, { additionalProperties: false }),
    ),
    'next-cursor': Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'payment-events-page', additionalProperties: false },
);

export function paymentQueries(payments: PaymentService) {
  return [
    queryKind({
      kind: 'payments/events',
      summary: "The caller's payment events, newest first",
      auth: 'required',
      params: Type.Object(
        {
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
          cursor: Type.Optional(Type.String({ maxLength: 200, description: '`next-cursor` of the previous page' })),
        },
        { additionalProperties: false },
      ),
      result: PaymentEventsPage,
      async run({ user, params }) {
        return payments.listEvents(user!.id, params.limit ?? 20, params.cursor);
      },
    }),
  ];
}
