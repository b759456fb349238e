/**
 * A resource's `file` and `image` fields (docs/resources.md, docs/files.md): each is a purpose of
 * the storage module, `<plural>.<field>`, an organization's file that the resource's write role
 * uploads. Its column holds the stored file's id. A create or an update takes a completed upload's
 * id, which must be of that purpose and that organization and held by no other item (else 400
 * naming the field); the answer is the file with a signed link. A file goes with the item: what an
 * update replaces or clears, and what a deleted item held, is deleted in that transaction (the
 * storage module's trigger queues its objects' deletion).
 */
import { phrase } from '../i18n/messages.js';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { requestCoercion, type FieldInput } from '../http/errors.js';
import type { OrgRole } from '../http/routes.js';
import { columnOf, isFileType, type FieldSpecs, type FileValue } from '../shared/resource-fields.js';
import type { FileLinks } from '../storage/links.js';
import { type FilePurpose, RENDITION_WIDTHS } from '../storage/purposes.js';

type Executor = Kysely<DatabaseSchema>;

/** The names of a resource's file fields. */
export const fileFieldsOf = (fields: FieldSpecs): string[] => Object.keys(fields).filter((name) => isFileType(fields[name].type));

/** The storage purposes of a resource's file fields, for its module's `declares[STORAGE_PURPOSES_KEY]`. */
export function resourceFilePurposes(plural: string, fields: FieldSpecs, writeRole: OrgRole): FilePurpose[] {
  return fileFieldsOf(fields).map((name) => ({
    id: `${plural}.${name}`,
    kind: fields[name].type === 'image' ? 'image' : 'file',
    owner: 'organization',
    role: writeRole,
  }));
}

/** A file column as the row's selection reads it: the stored file's own columns, as JSON. */
export interface FileColumn {
  id: string;
  name: string;
  content_type: string;
  size: number | string;
}

export class ResourceFiles {
  readonly names: string[];

  constructor(
    private readonly table: string,
    /** the resource's plural: its purposes are `<plural>.<field>` */
    private readonly plural: string,
    private readonly fields: FieldSpecs,
    private readonly links: FileLinks | undefined,
  ) {
    this.names = fileFieldsOf(fields);
    if (this.names.length > 0 && !links) throw new Error(`${plural} has file fields: its table needs the storage module's links`);
  }

  /** The selection of a file field: its stored file, or null. */
  selection(name: string): RawBuilder<unknown> {
    const column = sql.ref(`${this.table}.${columnOf(name)}`);
    return sql`(select json_build_object('id', f.id, 'name', f.name, 'content_type', f.content_type, 'size', f.size)
      from stored_file f where f.id = ${column}) as ${sql.ref(columnOf(name))}`;
  }

  /** A file field's answer, its links made now. */
  answer(name: string, value: FileColumn): FileValue {
    const links = this.links!;
    const file: FileValue = {
      id: value.id,
      name: value.name,
      'content-type': value.content_type,
      size: Number(value.size),
      url: links.link(value.id, 'original'),
    };
    if (this.fields[name].type === 'image') {
      const [small, large] = RENDITION_WIDTHS;
      file.renditions = { '64': links.link(value.id, `${small}`), '256': links.link(value.id, `${large}`) };
    }
    return file;
  }

  /**
   * Refuses (400, naming each field) a file id that is not a completed upload of the field's
   * purpose in the organization, or that another item holds. The files are locked, so two items
   * given one file at once are told apart (the column is unique too).
   */
  async check(trx: Executor, organizationId: string, input: Readonly<Record<string, unknown>>, itemId?: string): Promise<void> {
    const errors: FieldInput[] = [];
    for (const name of this.names) {
      const id = input[name];
      if (typeof id !== 'string') continue;
      const purpose = `${this.plural}.${name}`;
      const file = await trx
        .selectFrom('stored_file')
        .select('id')
        .where('id', '=', id)
        .where('purpose', '=', purpose)
        .where('organization_id', '=', organizationId)
        .where('status', '=', 'stored')
        .forUpdate()
        .executeTakeFirst();
      if (!file) {
        errors.push({ path: `/${name}`, message: phrase('is not a completed upload of purpose {purpose} in this organization', { purpose }) });
        continue;
      }
      const { rows } = await sql`select 1 from ${sql.table(this.table)} where ${sql.ref(columnOf(name))} = ${id}
        ${itemId ? sql`and id <> ${itemId}` : sql``} limit 1`.execute(trx);
      if (rows.length > 0) errors.push({ path: `/${name}`, message: 'is the file of another item' });
    }
    if (errors.length > 0) throw requestCoercion('body', errors);
  }

  /** The ids of the files an item holds, by field. */
  held(item: Readonly<Record<string, unknown>>): Map<string, string> {
    const ids = new Map<string, string>();
    for (const name of this.names) {
      const value = item[name] as FileValue | null | undefined;
      if (value) ids.set(name, value.id);
    }
    return ids;
  }

  /** Deletes stored files (the trigger queues their objects). */
  async delete(trx: Executor, ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await trx.deleteFrom('stored_file').where('id', 'in', ids).execute();
  }
}
