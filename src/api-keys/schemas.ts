/** Named schemas of the API key routes (docs/api-keys.md). */
import { Type, type Static } from 'typebox';

export const ApiKeyRole = Type.Union([Type.Literal('admin'), Type.Literal('member')], {
  description: 'the role the key acts with in its organization; never `owner` (a key cannot make or unmake owners)',
});

const ApiKeyFields = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  role: ApiKeyRole,
  prefix: Type.String({ description: "the key's non-secret part (`sk_<prefix>_…`), to tell keys apart" }),
  'created-at': Type.String({ format: 'date-time' }),
  'last-used-at': Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'recorded at most once a minute' }),
};

export const ApiKey = Type.Object(ApiKeyFields, { $id: 'api-key', additionalProperties: false, description: 'An API key, without its secret' });
export type ApiKey = Static<typeof ApiKey>;

export const CreatedApiKey = Type.Object(
  { ...ApiKeyFields, key: Type.String({ description: 'the key, `sk_<prefix>_<secret>`: shown this once, never again' }) },
  { $id: 'created-api-key', additionalProperties: false },
);
export type CreatedApiKey = Static<typeof CreatedApiKey>;

export const ApiKeys = Type.Object(
  { 'api-keys': Type.Array(ApiKey, { description: 'the live (unrevoked) keys, newest first' }) },
  { $id: 'api-keys', additionalProperties: false },
);
export type ApiKeys = Static<typeof ApiKeys>;

export const CreateApiKey = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'what the key is for, e.g. "CI deploys"' }),
    role: ApiKeyRole,
  },
  { $id: 'create-api-key', additionalProperties: false },
);
export type CreateApiKey = Static<typeof CreateApiKey>;

export const ApiKeyPath = Type.Object(
  { id: Type.String({ format: 'uuid' }), keyId: Type.String({ format: 'uuid', description: "the key's id" }) },
  { additionalProperties: false },
);

export const API_KEY_SCHEMAS = [ApiKey, CreatedApiKey, ApiKeys, CreateApiKey];
