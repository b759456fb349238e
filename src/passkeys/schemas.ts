/**
 * Passkey bodies. `options` and `response` are WebAuthn's JSON shapes as @simplewebauthn and the
 * browser's `PublicKeyCredential.toJSON()` write them (camelCase keys: `clientDataJSON`,
 * `pubKeyCredParams`): the one deliberate exception to the API's kebab-case keys, so a browser's
 * value passes through untouched (docs/sign-in.md). Every other key is kebab-case.
 */
import { Type, type Static } from 'typebox';
import { CurrentPassword } from '../account/schemas.js';

const B64Url = (description: string, maxLength = 4096) => Type.String({ maxLength, pattern: '^[A-Za-z0-9_-]*$', description });
const CredentialId = B64Url('the credential id, base64url', 1400);
const Extensions = Type.Object({}, { additionalProperties: true });

export const RegistrationResponseJson = Type.Object(
  {
    id: CredentialId,
    rawId: CredentialId,
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: B64Url('base64url'),
        attestationObject: B64Url('base64url', 8192),
        transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 })),
      },
      { additionalProperties: true },
    ),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
    clientExtensionResults: Extensions,
  },
  { $id: 'registration-response-json', additionalProperties: true, description: 'WebAuthn RegistrationResponseJSON (what `startRegistration` resolves to)' },
);

export const AuthenticationResponseJson = Type.Object(
  {
    id: CredentialId,
    rawId: CredentialId,
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: B64Url('base64url'),
        authenticatorData: B64Url('base64url'),
        signature: B64Url('base64url', 1024),
        userHandle: Type.Optional(B64Url('base64url', 128)),
      },
      { additionalProperties: true },
    ),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
    clientExtensionResults: Extensions,
  },
  {
    $id: 'authentication-response-json',
    additionalProperties: true,
    description: 'WebAuthn AuthenticationResponseJSON (what `startAuthentication` resolves to)',
  },
);

/** Spaces around it are trimmed; a name of spaces only is refused (400), never silently renamed "Passkey". */
export const PasskeyName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '\\S',
  description: 'shown in the list; at least one character that is not a space',
});

export const RegisterPasskey = Type.Object(
  { response: RegistrationResponseJson, name: Type.Optional(PasskeyName) },
  { $id: 'register-passkey', additionalProperties: false, description: '`name` defaults to "Passkey"' },
);

export const StartPasskeyRegistration = Type.Object({ password: CurrentPassword }, { $id: 'start-passkey-registration', additionalProperties: false });

export const RenamePasskey = Type.Object({ name: PasskeyName }, { $id: 'rename-passkey', additionalProperties: false });

export const Passkey = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    'created-at': Type.String({ format: 'date-time' }),
    'last-used-at': Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'the last sign-in with it' }),
  },
  { $id: 'passkey', additionalProperties: false },
);
export type Passkey = Static<typeof Passkey>;

export const Passkeys = Type.Object({ passkeys: Type.Array(Passkey) }, { $id: 'passkeys', additionalProperties: false });

export const PasskeyId = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

export const CreationOptionsJson = Type.Object(
  {
    rp: Type.Object({ name: Type.String(), id: Type.Optional(Type.String()) }, { additionalProperties: true }),
    user: Type.Object({ id: Type.String(), name: Type.String(), displayName: Type.String() }, { additionalProperties: true }),
    challenge: Type.String(),
    pubKeyCredParams: Type.Array(Type.Object({ alg: Type.Integer(), type: Type.String() }, { additionalProperties: true })),
  },
  {
    $id: 'public-key-credential-creation-options-json',
    additionalProperties: true,
    description: 'WebAuthn PublicKeyCredentialCreationOptionsJSON (for `startRegistration`)',
  },
);

export const RequestOptionsJson = Type.Object(
  { challenge: Type.String(), rpId: Type.Optional(Type.String()) },
  {
    $id: 'public-key-credential-request-options-json',
    additionalProperties: true,
    description: 'WebAuthn PublicKeyCredentialRequestOptionsJSON (for `startAuthentication`)',
  },
);

export const PasskeySignInOptions = Type.Object(
  { 'challenge-id': Type.String({ format: 'uuid' }), options: RequestOptionsJson },
  { $id: 'passkey-sign-in-options', additionalProperties: false },
);

export const PasskeySignIn = Type.Object(
  { 'challenge-id': Type.String({ format: 'uuid' }), response: AuthenticationResponseJson },
  { $id: 'passkey-sign-in', additionalProperties: false },
);
export type PasskeySignIn = Static<typeof PasskeySignIn>;

export const PASSKEY_SCHEMAS = [
  RegistrationResponseJson,
  AuthenticationResponseJson,
  RegisterPasskey,
  StartPasskeyRegistration,
  RenamePasskey,
  Passkey,
  Passkeys,
  CreationOptionsJson,
  RequestOptionsJson,
  PasskeySignInOptions,
  PasskeySignIn,
];
