/** The files API's shapes (docs/files.md). */
import { Type, type Static } from 'typebox';

export const CreateUpload = Type.Object(
  {
    purpose: Type.String({ minLength: 1, maxLength: 100, description: '`avatar`, `organization-logo`, or a resource field’s `<plural>.<field>`' }),
    name: Type.String({ minLength: 1, maxLength: 255, description: 'the file’s name, as the person chose it (shown, never a path)' }),
    'content-type': Type.String({
      minLength: 3,
      maxLength: 100,
      pattern: '^[a-z0-9.+-]+/[a-z0-9.+-]+$',
      description: 'the type the file is declared as; its bytes must say the same',
    }),
    size: Type.Integer({ minimum: 1, description: 'bytes; the upload may hold at most this' }),
    'organization-id': Type.Optional(Type.String({ format: 'uuid', description: 'an organization’s purpose: whose file it is' })),
  },
  { $id: 'create-upload', additionalProperties: false },
);
export type CreateUpload = Static<typeof CreateUpload>;

export const Upload = Type.Object(
  {
    'upload-id': Type.String({ format: 'uuid' }),
    method: Type.Union([Type.Literal('POST'), Type.Literal('PUT')], {
      description: 'POST: a form of `fields` then the file as `file` (S3); PUT: the bytes as the body (disk)',
    }),
    url: Type.String(),
    fields: Type.Record(Type.String(), Type.String()),
    'expires-at': Type.String({ format: 'date-time' }),
  },
  { $id: 'upload', additionalProperties: false },
);
export type Upload = Static<typeof Upload>;

export const StoredFile = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    'content-type': Type.String(),
    size: Type.Integer(),
    'created-at': Type.String({ format: 'date-time' }),
    url: Type.String({ description: 'a signed link, valid 5 minutes' }),
  },
  { $id: 'stored-file', additionalProperties: false },
);
export type StoredFile = Static<typeof StoredFile>;

export const UploadPath = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });
export const STORAGE_SCHEMAS = [CreateUpload, Upload, StoredFile];
