/**
 * What a file is for (docs/files.md, "Purposes"): declared by modules under {@link STORAGE_PURPOSES_KEY}
 * as webhook event types are, read by the storage module when it starts. A purpose says whose the
 * file is (the caller's account, or an organization where the caller has a role), whether it is
 * an image (PNG, JPEG or WebP only, with 64 and 256 px WebP renditions) or any file, and what
 * completing an upload of it does, in the completing transaction (`attach`: the avatar becomes the
 * account's, the one before is deleted).
 */
import type { DB } from '../db/database.js';
import type { OrgRole } from '../http/routes.js';

export const STORAGE_PURPOSES_KEY = 'storage.purposes';

/** An image is one of these, as its bytes say: never SVG or HTML. */
export const IMAGE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/webp'];
/** The widths of an image's WebP renditions. */
export const RENDITION_WIDTHS = [64, 256] as const;

export interface CompletedFile {
  id: string;
  accountId: string | null;
  organizationId: string | null;
}

export interface FilePurpose {
  /** `avatar`, `organization-logo`, `<plural>.<field>` */
  id: string;
  kind: 'image' | 'file';
  owner: 'account' | 'organization';
  /** an organization's purpose: the role the caller needs there */
  role?: OrgRole;
  /** what completing does, in its transaction; answers a file it replaced (deleted then) */
  attach?(trx: DB, file: CompletedFile): Promise<string | null>;
}

/** The account's picture: completing one makes it the avatar; the one before goes. */
export const AVATAR_PURPOSE: FilePurpose = {
  id: 'avatar',
  kind: 'image',
  owner: 'account',
  async attach(trx, file) {
    const before = await trx.selectFrom('account').select('avatar_file_id').where('id', '=', file.accountId!).forUpdate().executeTakeFirst();
    await trx.updateTable('account').set({ avatar_file_id: file.id }).where('id', '=', file.accountId!).execute();
    return before?.avatar_file_id ?? null;
  },
};

/** An organization's logo (its admins): completing one makes it the logo; the one before goes. */
export const LOGO_PURPOSE: FilePurpose = {
  id: 'organization-logo',
  kind: 'image',
  owner: 'organization',
  role: 'admin',
  async attach(trx, file) {
    const before = await trx.selectFrom('organization').select('logo_file_id').where('id', '=', file.organizationId!).forUpdate().executeTakeFirst();
    await trx.updateTable('organization').set({ logo_file_id: file.id }).where('id', '=', file.organizationId!).execute();
    return before?.logo_file_id ?? null;
  },
};
