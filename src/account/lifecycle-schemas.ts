/** Named schemas of the account lifecycle routes (docs/api.md, "Account lifecycle"). */
import { LOCALES } from '../shared/locales.js';
import { Type, type Static } from 'typebox';
import { ExportedAuditEntry } from '../audit/schemas.js';
import { Passkey } from '../passkeys/schemas.js';
import { Identity } from '../oidc/schemas.js';
import { ExportedMembership } from '../orgs/schemas.js';
import { CurrentPassword, Email, NewPassword, PasswordResetToken, Reauthenticate, UserAccount } from './schemas.js';

export { CurrentPassword, Reauthenticate };

/** An emailed link's token: 43 characters as issued; anything far longer is not one. */
const LinkToken = Type.String({ minLength: 1, maxLength: 200, description: 'the `token` query parameter of the emailed link' });
export const TokenRequest = Type.Object({ token: LinkToken }, { $id: 'token-request', additionalProperties: false });

/** The verification link's answer: the account, and a reset token when the proof removed a password set before it. */
export const VerifiedAccount = Type.Object(
  { ...UserAccount.properties, 'password-reset-token': Type.Optional(PasswordResetToken) },
  { $id: 'verified-account', additionalProperties: false },
);
export type VerifiedAccount = Static<typeof VerifiedAccount>;

export const NoBody = Type.Object({}, { $id: 'empty-request', additionalProperties: false, description: 'an empty map (or no body)' });

export const ForgotPassword = Type.Object({ email: Type.String({ maxLength: 254 }) }, { $id: 'forgot-password', additionalProperties: false });

export const ResetPassword = Type.Object({ token: LinkToken, password: NewPassword }, { $id: 'reset-password', additionalProperties: false });

export const ChangePassword = Type.Object(
  { 'current-password': CurrentPassword, password: NewPassword },
  { $id: 'change-password', additionalProperties: false },
);

export const ChangeEmail = Type.Object({ password: CurrentPassword, 'new-email': Email }, { $id: 'change-email', additionalProperties: false });

export const UpdateAccount = Type.Object(
  {
    name: Type.Optional(
      Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'trimmed; null, an empty string or spaces alone clear the name' }),
    ),
    locale: Type.Optional(
      Type.Union([Type.String({ maxLength: 35 }), Type.Null()], {
        description: `the account's language: one of ${LOCALES.join(', ')} (a regional tag such as \`de-AT\` is kept as its language); null: follow the browser`,
      }),
    ),
  },
  { $id: 'update-account', additionalProperties: false, minProperties: 1 },
);

export const DeleteAccount = Type.Object({ password: CurrentPassword }, { $id: 'delete-account', additionalProperties: false });

export const Accepted = Type.Object(
  { message: Type.String() },
  { $id: 'accepted', additionalProperties: false, description: 'the request was taken; what happens next is emailed' },
);
export type Accepted = Static<typeof Accepted>;

export const AccountSession = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    'created-at': Type.String({ format: 'date-time', description: 'the log-in' }),
    'last-used-at': Type.String({ format: 'date-time', description: 'the last log-in or refresh' }),
    'user-agent': Type.Union([Type.String(), Type.Null()]),
    ip: Type.Union([Type.String(), Type.Null()]),
    current: Type.Boolean({ description: 'the session of the access token that asked' }),
  },
  { $id: 'account-session', additionalProperties: false },
);
export type AccountSession = Static<typeof AccountSession>;

export const AccountSessions = Type.Object({ sessions: Type.Array(AccountSession) }, { $id: 'account-sessions', additionalProperties: false });

export const SessionId = Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });

export const ExportedPaymentEvent = Type.Object(
  {
    provider: Type.String(),
    id: Type.String(),
    type: Type.String(),
    'created-at': Type.String({ format: 'date-time' }),
    'received-at': Type.String({ format: 'date-time' }),
    payload: Type.Unknown({ description: 'the event as the provider sent it' }),
  },
  { $id: 'exported-payment-event', additionalProperties: false },
);

export const AccountExport = Type.Object(
  {
    'exported-at': Type.String({ format: 'date-time' }),
    account: UserAccount,
    sessions: Type.Array(AccountSession),
    memberships: Type.Array(ExportedMembership, { description: 'the organizations the account belongs to, with its role' }),
    identities: Type.Array(Identity, { description: 'the sign-in provider identities linked to the account' }),
    'payment-events': Type.Array(ExportedPaymentEvent),
    'audit-log': Type.Array(ExportedAuditEntry, {
      description: "the account's own audit entries (its account events, the organization actions it took), newest first, at most 1000",
    }),
    'audit-log-truncated': Type.Boolean({ description: 'true when older entries exist beyond the 1000 given' }),
    passkeys: Type.Array(Passkey, { description: "the account's passkeys (no key material); whether two-factor is on is `account.two-factor-enabled`" }),
    files: Type.Array(
      Type.Object(
        {
          id: Type.String({ format: 'uuid' }),
          purpose: Type.String(),
          name: Type.String(),
          'content-type': Type.String(),
          size: Type.Integer(),
          'organization-id': Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
          'created-at': Type.String({ format: 'date-time' }),
        },
        { additionalProperties: false },
      ),
      { description: 'the files the account holds (its avatar) or uploaded (docs/files.md); `GET /api/files/:id` downloads one' },
    ),
  },
  { $id: 'account-export', additionalProperties: false, description: 'everything the service keeps about the account (GDPR access)' },
);
export type AccountExport = Static<typeof AccountExport>;

export const LIFECYCLE_SCHEMAS = [
  TokenRequest,
  VerifiedAccount,
  NoBody,
  Reauthenticate,
  ForgotPassword,
  ResetPassword,
  ChangePassword,
  ChangeEmail,
  UpdateAccount,
  DeleteAccount,
  Accepted,
  AccountSession,
  AccountSessions,
  ExportedPaymentEvent,
  AccountExport,
];
