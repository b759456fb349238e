/**
 * Files (docs/files.md): the two-step upload, its completion, signed links and removal.
 *
 * - `createUpload`: the purpose must be one the caller may use (its owner: the caller's account,
 *   or an organization where the caller has the purpose's role) and allow the declared type and
 *   size (an image: PNG, JPEG or WebP up to FILE_IMAGE_MAX_BYTES; a file up to FILE_MAX_BYTES), an
 *   organization's file must fit its plan's `storage-bytes` limit; then a pending row and the
 *   store's upload target (a presigned POST, or the disk driver's signed PUT).
 * - `complete`: the stored object's size (at most the declared one) and its first bytes
 *   (`file-type`) must say what was declared and what the purpose allows; else 400 `file-rejected`
 *   and the row goes (the trigger queues the object's deletion). An image gets its 64 and 256 px
 *   WebP renditions (`sharp`). The purpose's `attach` and the audit entry commit with it.
 * - A file row's deletion, whatever causes it, queues its objects' deletion in that transaction
 *   (migration 0026's trigger; deletions.ts deletes them).
 * The store away: 503 with Retry-After, nothing half-written in the database.
 */
import { randomUUID } from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
import { appendAudit, type ClientOrigin } from '../audit/log.js';
import type { DB } from '../db/database.js';
import { forbidden, HttpError, notFound, type Words } from '../http/errors.js';
import { english, msg, phrase } from '../i18n/messages.js';
import { hasRole, type MembershipResolver } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { type StorageDriver, StoreUnavailable } from './driver.js';
import type { FileLinks } from './links.js';
import { type FilePurpose, IMAGE_TYPES, RENDITION_WIDTHS } from './purposes.js';
import type { CreateUpload, StoredFile, Upload } from './schemas.js';
import type { StorageSettings } from './settings.js';

/** bytes `file-type` reads to know a type */
const SNIFF_BYTES = 4100;

const REJECTED = 'The file cannot be kept: ';

/**
 * 400 `file-rejected`: `message` is the whole message, "The file cannot be kept: <the reason>" (so that
 * each reason is one message to translate); the body's `reason` is its English reason.
 */
export const fileRejected = (message: Words, extra: Record<string, unknown> = {}) => {
  const text = english(message);
  return new HttpError(400, { type: 'file-rejected', message, reason: text.startsWith(REJECTED) ? text.slice(REJECTED.length) : text, ...extra });
};

/** An organization's storage limit, in the transaction that adds the file: resolves, or throws 402 `usage-limit`. */
export type StorageQuota = (trx: DB, organizationId: string, adding: number) => Promise<void>;

export interface FileServiceDeps {
  db: DB;
  driver: StorageDriver;
  links: FileLinks;
  purposes: () => ReadonlyMap<string, FilePurpose>;
  memberships: MembershipResolver;
  settings: StorageSettings;
  log: Logger;
  quota?: StorageQuota;
  /** objects were queued for deletion: the worker looks now */
  deletionsQueued(): void;
}

export interface Caller {
  accountId: string;
  origin: ClientOrigin;
}

/** Runs a store call: a failure of the store is 503 with Retry-After. */
async function store<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new StoreUnavailable(err);
  }
}

export const storeUnavailable = () =>
  new HttpError(503, { type: 'service-unavailable', message: 'The file store cannot be reached; try again shortly' }, { 'retry-after': '5' });

const dispositionOf = (name: string, contentType: string) =>
  IMAGE_TYPES.includes(contentType)
    ? 'inline'
    : `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;

export class FileService {
  constructor(private readonly deps: FileServiceDeps) {}

  private purpose(id: string): FilePurpose {
    const purpose = this.deps.purposes().get(id);
    if (!purpose) throw fileRejected(phrase('The file cannot be kept: there is no purpose {purpose}', { purpose: id }), { purpose: id });
    return purpose;
  }

  /** The organization the caller may put a file of `purpose` in, or none for the account's own. */
  private async ownerOf(purpose: FilePurpose, caller: Caller, organizationId: string | undefined): Promise<string | null> {
    if (purpose.owner === 'account') return null;
    if (!organizationId)
      throw fileRejected(phrase('The file cannot be kept: a {purpose} file belongs to an organization: name its organization-id', { purpose: purpose.id }));
    const membership = await this.deps.memberships(organizationId, caller.accountId);
    if (!membership) throw notFound('No such organization', { id: organizationId });
    if (purpose.role && !hasRole(membership.role, purpose.role))
      throw forbidden(phrase('A {purpose} file needs the {role} role', { purpose: purpose.id, role: purpose.role }));
    return organizationId;
  }

  private limitOf(purpose: FilePurpose): number {
    return purpose.kind === 'image' ? this.deps.settings.imageMaxBytes : this.deps.settings.fileMaxBytes;
  }

  async createUpload(caller: Caller, input: CreateUpload): Promise<Upload> {
    const purpose = this.purpose(input.purpose);
    const type = input['content-type'].toLowerCase();
    if (purpose.kind === 'image' && !IMAGE_TYPES.includes(type))
      throw fileRejected(phrase('The file cannot be kept: a {purpose} is a PNG, JPEG or WebP image, not {type}', { purpose: purpose.id, type }));
    const limit = this.limitOf(purpose);
    if (input.size > limit)
      throw fileRejected(phrase('The file cannot be kept: a {purpose} file holds at most {limit} bytes', { purpose: purpose.id, limit }), { limit });
    const organizationId = await this.ownerOf(purpose, caller, input['organization-id']);
    const id = randomUUID();
    const key = `files/${id}`;
    const expiresAt = new Date(Date.now() + this.deps.settings.uploadTtlMs);
    // the target first: a store that is away leaves nothing behind
    const target = await store(() => this.deps.driver.uploadTarget({ key, contentType: type, maxBytes: input.size, expiresAt }));
    await this.deps.db.transaction().execute(async (trx) => {
      // the limit is checked and the file counted in one transaction (under the organization's lock: quota)
      if (organizationId) await this.deps.quota?.(trx, organizationId, input.size);
      await trx
        .insertInto('stored_file')
        .values({
          id,
          key,
          purpose: purpose.id,
          account_id: organizationId ? null : caller.accountId,
          organization_id: organizationId,
          uploaded_by: caller.accountId,
          name: input.name,
          content_type: type,
          size: input.size,
        })
        .execute();
    });
    return { 'upload-id': id, ...target, 'expires-at': expiresAt.toISOString() };
  }

  /** The caller's pending upload. */
  private async pending(caller: Caller, uploadId: string) {
    const row = await this.deps.db
      .selectFrom('stored_file')
      .selectAll()
      .where('id', '=', uploadId)
      .where('uploaded_by', '=', caller.accountId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (!row) throw notFound('No such upload: it is unknown, completed already, or expired', { id: uploadId });
    return row;
  }

  /** Refuses the upload: its row (and, by the trigger, its object) goes. */
  private async reject(id: string, message: Words): Promise<never> {
    await this.deps.db.deleteFrom('stored_file').where('id', '=', id).execute();
    this.deps.deletionsQueued();
    throw fileRejected(message);
  }

  async complete(caller: Caller, uploadId: string): Promise<StoredFile> {
    const row = await this.pending(caller, uploadId);
    const purpose = this.purpose(row.purpose);
    const size = await store(() => this.deps.driver.size(row.key));
    if (size === undefined) throw fileRejected(msg('The file cannot be kept: nothing was uploaded yet: send the bytes to the upload’s url first'));
    const declared = Number(row.size);
    if (size > declared)
      return this.reject(row.id, phrase('The file cannot be kept: it holds {size} bytes, more than the {declared} declared', { size, declared }));
    const sniffed = await fileTypeFromBuffer(await store(() => this.deps.driver.head(row.key, SNIFF_BYTES)));
    const actual = sniffed?.mime;
    // a type file-type knows must be the declared one; one it cannot tell (text, CSV) is taken as declared only for a file, never an image
    if (purpose.kind === 'image' ? actual !== row.content_type : actual !== undefined && actual !== row.content_type)
      return this.reject(
        row.id,
        phrase('The file cannot be kept: its bytes are {known, select, yes {{actual}} other {not a known type}}, not the {declared} declared', {
          known: actual ? 'yes' : 'no',
          actual: actual ?? '',
          declared: row.content_type,
        }),
      );
    if (actual === undefined && /^(text\/html|image\/svg|application\/xhtml)/.test(row.content_type))
      return this.reject(row.id, phrase('The file cannot be kept: {type} is never kept', { type: row.content_type }));
    const renditions = purpose.kind === 'image' ? await this.renditions(row.key) : [];
    if (renditions === undefined) return this.reject(row.id, msg('The file cannot be kept: the image cannot be read'));
    const { file, replaced } = await this.deps.db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('stored_file')
        .set({ status: 'stored', size, completed_at: new Date(), renditions: [...renditions] })
        .where('id', '=', row.id)
        .where('status', '=', 'pending')
        .returningAll()
        .executeTakeFirst();
      if (!done) throw notFound('No such upload: it is unknown, completed already, or expired', { id: uploadId });
      const replacedId = (await purpose.attach?.(trx, { id: done.id, accountId: done.account_id, organizationId: done.organization_id })) ?? null;
      if (replacedId && replacedId !== done.id) await trx.deleteFrom('stored_file').where('id', '=', replacedId).execute();
      if (done.organization_id)
        await appendAudit(trx, {
          action: 'file.uploaded',
          organizationId: done.organization_id,
          actor: { accountId: caller.accountId },
          target: { type: 'file', id: done.id },
          details: { purpose: done.purpose, 'content-type': done.content_type, size },
          origin: caller.origin,
        });
      return { file: done, replaced: replacedId };
    });
    if (replaced) this.deps.deletionsQueued();
    return this.toFile(file);
  }

  /** The image's WebP renditions, written beside it; undefined when sharp cannot read it. */
  private async renditions(key: string): Promise<number[] | undefined> {
    const original = await store(() => this.deps.driver.read(key));
    const { default: sharp } = await import('sharp');
    try {
      const made = await Promise.all(
        RENDITION_WIDTHS.map(
          async (width) => [width, await sharp(original).rotate().resize(width, width, { fit: 'cover' }).webp({ quality: 82 }).toBuffer()] as const,
        ),
      );
      for (const [width, body] of made) await store(() => this.deps.driver.write(`${key}.${width}.webp`, body, 'image/webp'));
      return made.map(([width]) => width);
    } catch (err) {
      if (err instanceof StoreUnavailable) throw err;
      return undefined;
    }
  }

  toFile(row: { id: string; name: string; content_type: string; size: string | number; created_at: Date }): StoredFile {
    return {
      id: row.id,
      name: row.name,
      'content-type': row.content_type,
      size: Number(row.size),
      'created-at': row.created_at.toISOString(),
      url: this.deps.links.link(row.id, 'original'),
    };
  }

  /**
   * The signed link of `GET /api/files/:id`: a file of the caller's own, of an organization the
   * caller is a member of, or the avatar of an account sharing an organization with the caller.
   */
  async linkFor(accountId: string, fileId: string): Promise<string> {
    const row = await this.deps.db
      .selectFrom('stored_file as f')
      .select(['f.id', 'f.account_id', 'f.organization_id'])
      .where('f.id', '=', fileId)
      .where('f.status', '=', 'stored')
      .executeTakeFirst();
    const mayRead = row && (await this.mayRead(accountId, row));
    if (!mayRead) throw notFound('No such file', { id: fileId });
    return this.deps.links.link(row.id, 'original');
  }

  private async mayRead(accountId: string, row: { account_id: string | null; organization_id: string | null }): Promise<boolean> {
    if (row.account_id === accountId) return true;
    if (row.organization_id) return (await this.deps.memberships(row.organization_id, accountId)) !== undefined;
    if (!row.account_id) return false;
    const shared = await this.deps.db
      .selectFrom('membership as a')
      .innerJoin('membership as b', 'b.organization_id', 'a.organization_id')
      .select('a.organization_id')
      .where('a.account_id', '=', accountId)
      .where('b.account_id', '=', row.account_id)
      .executeTakeFirst();
    return shared !== undefined;
  }

  /** What a signed link serves: the object's key, type and disposition. */
  async served(fileId: string, variant: string): Promise<{ key: string; contentType: string; disposition: string } | undefined> {
    const row = await this.deps.db
      .selectFrom('stored_file')
      .select(['key', 'name', 'content_type', 'renditions'])
      .where('id', '=', fileId)
      .where('status', '=', 'stored')
      .executeTakeFirst();
    if (!row) return undefined;
    if (variant === 'original') return { key: row.key, contentType: row.content_type, disposition: dispositionOf(row.name, row.content_type) };
    const width = Number(variant);
    if (!row.renditions.includes(width)) return undefined;
    return { key: `${row.key}.${width}.webp`, contentType: 'image/webp', disposition: 'inline' };
  }

  /** Removes the account's avatar: the account's row forgets it, the file row goes (its objects queued). */
  async removeAvatar(caller: Caller): Promise<void> {
    const removed = await this.deps.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('account').select('avatar_file_id').where('id', '=', caller.accountId).forUpdate().executeTakeFirst();
      if (!row?.avatar_file_id) return false;
      await trx.updateTable('account').set({ avatar_file_id: null }).where('id', '=', caller.accountId).execute();
      await trx.deleteFrom('stored_file').where('id', '=', row.avatar_file_id).execute();
      return true;
    });
    if (!removed) throw notFound('The account has no avatar');
    this.deps.deletionsQueued();
  }

  /** Removes an organization's logo (its admins: route data), audited. */
  async removeLogo(caller: Caller, organizationId: string): Promise<void> {
    const removed = await this.deps.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('organization').select('logo_file_id').where('id', '=', organizationId).forUpdate().executeTakeFirst();
      if (!row?.logo_file_id) return false;
      await trx.updateTable('organization').set({ logo_file_id: null }).where('id', '=', organizationId).execute();
      await trx.deleteFrom('stored_file').where('id', '=', row.logo_file_id).execute();
      await appendAudit(trx, {
        action: 'file.deleted',
        organizationId,
        actor: { accountId: caller.accountId },
        target: { type: 'file', id: row.logo_file_id },
        details: { purpose: 'organization-logo' },
        origin: caller.origin,
      });
      return true;
    });
    if (!removed) throw notFound('The organization has no logo');
    this.deps.deletionsQueued();
  }

  /** Deletes uploads never completed (older than FILE_PENDING_TTL): their objects are queued. */
  async purgePending(): Promise<number> {
    const gone = await this.deps.db
      .deleteFrom('stored_file')
      .where('status', '=', 'pending')
      .where('created_at', '<', new Date(Date.now() - this.deps.settings.pendingTtlMs))
      .returning('id')
      .execute();
    if (gone.length > 0) this.deps.deletionsQueued();
    return gone.length;
  }
}
