/** The named schemas for accounts; one source for validation, OpenAPI and types. */
import { Type, type Static, type TLiteral, type TNull } from 'typebox';
import { LOCALES, type Locale } from '../shared/locales.js';

/**
 * The address rule, as the validator applies it (ajv-formats' `email`, case-insensitive): the
 * pattern says it in the OpenAPI document, where `format: email` alone would leave it to each reader.
 */
export const EMAIL_PATTERN =
  "^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$";

export const Email = Type.String({ format: 'email', pattern: EMAIL_PATTERN, maxLength: 254, description: 'compared and stored lower-cased' });

export const Subscription = Type.Object(
  {
    status: Type.Union([Type.Literal('none'), Type.Literal('trialing'), Type.Literal('active'), Type.Literal('past-due'), Type.Literal('canceled')]),
    plan: Type.Union([Type.String(), Type.Null()]),
    'current-period-end': Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'subscription', additionalProperties: false },
);

/** An image's signed links (valid 5 minutes from the answer): the original and its 64 and 256 px WebP renditions. */
export const ImageLinksSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String(),
    renditions: Type.Object({ '64': Type.String(), '256': Type.String() }, { additionalProperties: false }),
  },
  { $id: 'image-links', additionalProperties: false },
);

export const UserAccount = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    'created-at': Type.String({ format: 'date-time' }),
    'email-verified': Type.Boolean({ description: 'the owner opened a verification link sent to `email`' }),
    'two-factor-enabled': Type.Boolean({ description: 'log-in asks for a TOTP code after the password (docs/sign-in.md)' }),
    'platform-admin': Type.Boolean({ description: 'the verified email is in ADMIN_EMAILS: the admin pages are open to this account (docs/admin.md)' }),
    'impersonated-by': Type.Optional(
      Type.Object(
        { id: Type.String({ format: 'uuid' }), email: Type.String() },
        { additionalProperties: false, description: 'only in an impersonated session: the platform admin acting as this account' },
      ),
    ),
    avatar: Type.Union([ImageLinksSchema, Type.Null()], { description: "the account's picture, or null (docs/files.md)" }),
    locale: Type.Union([...LOCALES.map((l) => Type.Literal(l)), Type.Null()] as [TLiteral<Locale>, TNull], {
      description: "the account's language (docs/i18n.md): its emails and error answers use it; null: it follows the browser",
    }),
    subscription: Subscription,
  },
  { $id: 'user-account', additionalProperties: false },
);
export type UserAccount = Static<typeof UserAccount>;

/** A new password: 8..128 characters, hashed whole. */
export const NewPassword = Type.String({ minLength: 8, maxLength: 128 });

export const CreateAccount = Type.Object(
  {
    email: Email,
    password: NewPassword,
    'confirm-password': Type.Optional(Type.String({ maxLength: 128, description: 'must equal `password` when given' })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { $id: 'create-account', additionalProperties: false },
);
export type CreateAccount = Static<typeof CreateAccount>;

export const SignUpResponse = Type.Object({ account: UserAccount }, { $id: 'sign-up-response', additionalProperties: false });

export const LogIn = Type.Object(
  {
    email: Type.String({ maxLength: 254 }),
    password: Type.String({ maxLength: 128 }),
  },
  { $id: 'log-in', additionalProperties: false },
);
export type LogIn = Static<typeof LogIn>;

/** Handed back where an address's first proof removed the password set before it (address-proof.ts). */
export const PasswordResetToken = Type.String({
  description:
    'only when this first proof of the address removed a password set before it: a reset token (1 hour, single use) for ' +
    '`POST /api/account/reset-password`, so the person can set a password at once',
});

export const LogInResponse = Type.Object(
  {
    'access-token': Type.String(),
    'refresh-token': Type.String(),
    'token-type': Type.Literal('Bearer'),
    'expires-in': Type.Integer({ description: 'seconds until the access token expires' }),
    account: UserAccount,
    'password-reset-token': Type.Optional(PasswordResetToken),
  },
  { $id: 'log-in-response', additionalProperties: false },
);
export type LogInResponse = Static<typeof LogInResponse>;

/** The answer to a right password of an account with two-factor on: no tokens yet (docs/sign-in.md). */
export const MfaRequired = Type.Object(
  {
    'mfa-required': Type.Literal(true),
    'mfa-token': Type.String({ description: 'completes the log-in at `POST /api/account/log-in/mfa`; single-use' }),
    'expires-in': Type.Integer({ description: 'seconds the mfa-token stays valid' }),
  },
  { $id: 'mfa-required', additionalProperties: false },
);
export type MfaRequired = Static<typeof MfaRequired>;

export const RefreshRequest = Type.Object(
  { 'refresh-token': Type.Optional(Type.String({ maxLength: 200, description: 'else the `refresh-token` cookie is used' })) },
  { $id: 'refresh-request', additionalProperties: false },
);

/** The password re-entered to confirm a sensitive change (route data `reauth`): an account without one signs in again instead. */
export const CurrentPassword = Type.Optional(
  Type.String({
    maxLength: 128,
    description: "the account's password (re-authentication); an account without one gives none and must have signed in within the last 10 minutes",
  }),
);

/** The body of a sensitive change that takes nothing else (a removal): the re-authentication alone. */
export const Reauthenticate = Type.Object(
  { password: CurrentPassword },
  { $id: 'reauthenticate', additionalProperties: false, description: 'the password, or nothing for an account without one' },
);

export const ACCOUNT_SCHEMAS = [Subscription, ImageLinksSchema, UserAccount, CreateAccount, SignUpResponse, LogIn, LogInResponse, MfaRequired, RefreshRequest];
