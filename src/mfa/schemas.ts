/** Two-factor (TOTP) request and response bodies; one source for validation, OpenAPI and types. */
import { Type, type Static, type TSchema } from 'typebox';
import { CurrentPassword } from '../account/schemas.js';

const Code = Type.String({ maxLength: 16, description: 'the 6-digit code the authenticator app shows (spaces ignored)' });
const BackupCode = Type.String({
  maxLength: 32,
  description: 'one of the backup codes given when two-factor was turned on (single-use; case, spaces and dashes ignored)',
});

export const TwoFactorSetup = Type.Object(
  {
    secret: Type.String({ description: 'base32; shown once, for typing into an authenticator app' }),
    'otpauth-url': Type.String({ description: 'the `otpauth://totp/…` URI (what the QR code holds)' }),
    'otpauth-qr': Type.String({ description: 'the same URI as a QR code: a `data:image/png;base64,…` URL for an `<img>`' }),
  },
  { $id: 'two-factor-setup', additionalProperties: false },
);
export type TwoFactorSetup = Static<typeof TwoFactorSetup>;

export const TwoFactorEnable = Type.Object({ code: Code, password: CurrentPassword }, { $id: 'two-factor-enable', additionalProperties: false });
export type TwoFactorEnable = Static<typeof TwoFactorEnable>;

export const BackupCodes = Type.Object(
  { 'backup-codes': Type.Array(Type.String(), { description: 'ten single-use recovery codes, shown this once' }) },
  { $id: 'backup-codes', additionalProperties: false },
);

/**
 * What the OpenAPI document shows for a body that takes exactly one of `code` and `backup-code`
 * (with `fields` besides): `oneOf` of the two shapes. The validated schema has both optional and
 * the service answers "give one of" (a `oneOf` failure from the validator lists every branch).
 */
function oneOfSecondFactor(id: string, fields: Record<string, TSchema>, description: string): TSchema {
  const shape = (factor: 'code' | 'backup-code') =>
    Type.Object(
      { ...fields, [factor]: factor === 'code' ? Code : BackupCode },
      { additionalProperties: false, title: factor === 'code' ? 'with a code' : 'with a backup code' },
    );
  return Type.Unsafe({ oneOf: [shape('code'), shape('backup-code')], description, title: id });
}

export const TwoFactorDisable = Type.Object(
  {
    password: CurrentPassword,
    code: Type.Optional(Code),
    'backup-code': Type.Optional(BackupCode),
  },
  { $id: 'two-factor-disable', additionalProperties: false, description: 'the password and one of `code` or `backup-code`' },
);
export type TwoFactorDisable = Static<typeof TwoFactorDisable>;

export const RegenerateBackupCodes = Type.Object(
  {
    password: CurrentPassword,
    code: Type.String({
      maxLength: 16,
      description: 'a current code of the authenticator app (not a backup code: whoever holds only those must not mint more)',
    }),
  },
  { $id: 'regenerate-backup-codes', additionalProperties: false },
);
export type RegenerateBackupCodes = Static<typeof RegenerateBackupCodes>;
export const TwoFactorDisableDocs = oneOfSecondFactor(
  'two-factor-disable',
  { password: CurrentPassword },
  'the password (or nothing, for an account without one) and one of `code` or `backup-code`',
);

export const MfaLogIn = Type.Object(
  {
    'mfa-token': Type.String({ maxLength: 200, description: 'from the `mfa-required` answer of log-in' }),
    code: Type.Optional(Code),
    'backup-code': Type.Optional(BackupCode),
  },
  { $id: 'mfa-log-in', additionalProperties: false, description: 'the mfa-token and one of `code` or `backup-code`' },
);
export type MfaLogIn = Static<typeof MfaLogIn>;
export const MfaLogInDocs = oneOfSecondFactor(
  'mfa-log-in',
  {
    'mfa-token': Type.String({ maxLength: 200, description: 'from the `mfa-required` answer of log-in' }),
  },
  'the mfa-token and one of `code` or `backup-code`',
);

/** The second factor a request gives: a TOTP code or a backup code. */
export type SecondFactorInput = { code?: string; 'backup-code'?: string };

export const MFA_SCHEMAS = [TwoFactorSetup, TwoFactorEnable, BackupCodes, TwoFactorDisable, RegenerateBackupCodes, MfaLogIn];
