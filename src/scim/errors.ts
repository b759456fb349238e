/** SCIM's error shape (RFC 7644 §3.12): every answer of the `/scim/v2` routes that is not a success. */
export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type ScimType = 'invalidFilter' | 'invalidSyntax' | 'invalidValue' | 'invalidPath' | 'noTarget' | 'uniqueness' | 'mutability' | 'tooMany';

export class ScimHttpError extends Error {
  constructor(
    readonly status: number,
    detail: string,
    readonly scimType?: ScimType,
  ) {
    super(detail);
    this.name = 'ScimHttpError';
  }

  body(): Record<string, unknown> {
    return { schemas: [SCIM_ERROR_SCHEMA], status: String(this.status), ...(this.scimType ? { scimType: this.scimType } : {}), detail: this.message };
  }
}

export const scimBadRequest = (detail: string, scimType: ScimType) => new ScimHttpError(400, detail, scimType);
export const scimNotFound = (detail = 'No such user in this organization') => new ScimHttpError(404, detail);
