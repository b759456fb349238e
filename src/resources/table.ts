/**
 * The rows of a resource's table (one per item, `organization_id` first), read and written for
 * its service: the columns of its fields (src/shared/resource-fields.ts) in the API's shapes,
 * and keyset pages on (`created_at`, `id`), newest first, so an item added while someone pages
 * is neither listed twice nor skipped. The table's `created_at` keeps milliseconds (its
 * migration's default), so a cursor holds it exactly. File fields (files.ts) are answered as
 * their stored files; a write checks the ids given, and deletes the files an item lets go.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { requestCoercion } from '../http/errors.js';
import { columnOf, type FieldSpecs, type FieldValue } from '../shared/resource-fields.js';
import type { FileLinks } from '../storage/links.js';
import { type FileColumn, ResourceFiles } from './files.js';

/** An item as the API answers it: `id`, its fields, `created-at`, `updated-at`. */
export type ResourceItem = { id: string; 'created-at': string; 'updated-at': string } & Record<string, FieldValue>;

/** What a create or an update sends: fields by their API names (a decimal may be a number). */
export type ResourceInput = Readonly<Record<string, FieldValue | undefined>>;

export interface ResourcePage {
  items: ResourceItem[];
  nextCursor: string | null;
}

type Executor = Kysely<DatabaseSchema>;
type Row = Record<string, unknown> & { id: string; created_at: Date; updated_at: Date };

const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)~([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The cursor after `row`: where the next page starts. */
const encodeCursor = (row: Row) => Buffer.from(`${row.created_at.toISOString()}~${row.id}`).toString('base64url');

/** The position a cursor names; one this API did not issue is a 400 naming `cursor`. */
function decodeCursor(cursor: string): { createdAt: string; id: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = CURSOR.exec(text);
  if (!match || Buffer.from(text).toString('base64url') !== cursor || Number.isNaN(Date.parse(match[1]))) {
    throw requestCoercion('query', [{ path: '/cursor', message: 'is not a cursor this API issued' }]);
  }
  return { createdAt: match[1], id: match[2] };
}

/** What a table of file fields needs: the resource's plural (its purposes are `<plural>.<field>`) and the storage module's links. */
export interface ResourceTableFiles {
  plural: string;
  links: FileLinks;
}

export class ResourceTable {
  private readonly selection: RawBuilder<unknown>;
  private readonly files: ResourceFiles;

  constructor(
    private readonly table: string,
    private readonly fields: FieldSpecs,
    files?: ResourceTableFiles,
  ) {
    this.files = new ResourceFiles(table, files?.plural ?? table, fields, files?.links);
    // dates and decimals as text: the database's own spelling, never a time zone's or a float's
    const columns = Object.entries(fields).map(([name, spec]) => {
      const column = sql.ref(columnOf(name));
      if (spec.type === 'file' || spec.type === 'image') return this.files.selection(name);
      return spec.type === 'date' || spec.type === 'decimal' ? sql`${column}::text as ${sql.ref(columnOf(name))}` : column;
    });
    this.selection = sql.join([sql.ref('id'), ...columns, sql.ref('created_at'), sql.ref('updated_at')]);
  }

  /** The API's shape of a row. */
  toItem(row: Row): ResourceItem {
    const item: ResourceItem = { id: row.id, 'created-at': '', 'updated-at': '' };
    for (const [name, spec] of Object.entries(this.fields)) {
      const value = row[columnOf(name)];
      if (value === null || value === undefined) item[name] = null;
      else if (spec.type === 'datetime') item[name] = (value as Date).toISOString();
      else if (spec.type === 'file' || spec.type === 'image') item[name] = this.files.answer(name, value as FileColumn);
      else item[name] = value as FieldValue;
    }
    item['created-at'] = row.created_at.toISOString();
    item['updated-at'] = row.updated_at.toISOString();
    return item;
  }

  /** A page of the organization's items, newest first. */
  async page(db: Executor, organizationId: string, limit: number, cursor?: string): Promise<ResourcePage> {
    const after = cursor ? decodeCursor(cursor) : undefined;
    const { rows } = await sql<Row>`
      select ${this.selection} from ${sql.table(this.table)}
      where organization_id = ${organizationId}
      ${after ? sql`and (created_at, id) < (cast(${after.createdAt} as timestamptz), cast(${after.id} as uuid))` : sql``}
      order by created_at desc, id desc
      limit ${limit + 1}`.execute(db);
    const items = rows.slice(0, limit);
    return { items: items.map((row) => this.toItem(row)), nextCursor: rows.length > limit ? encodeCursor(items[items.length - 1]) : null };
  }

  /** One item of the organization, or undefined (another organization's id included). */
  async find(db: Executor, organizationId: string, id: string, lock = false): Promise<ResourceItem | undefined> {
    const { rows } = await sql<Row>`
      select ${this.selection} from ${sql.table(this.table)}
      where organization_id = ${organizationId} and id = ${id} ${lock ? sql`for update` : sql``}`.execute(db);
    return rows[0] && this.toItem(rows[0]);
  }

  /** Adds an item; a file field's id must be a completed upload of its purpose in the organization that no other item holds (else 400). */
  async insert(trx: Executor, organizationId: string, input: ResourceInput): Promise<ResourceItem> {
    await this.files.check(trx, organizationId, input);
    const values = { organization_id: organizationId, ...this.columnValues(input, true) };
    const names = Object.keys(values);
    const { rows } = await sql<Row>`
      insert into ${sql.table(this.table)} (${sql.join(names.map((n) => sql.ref(n)))})
      values (${sql.join(names.map((n) => sql.val((values as Record<string, unknown>)[n])))})
      returning ${this.selection}`.execute(trx);
    return this.toItem(rows[0]);
  }

  /** Sets the given fields (files checked as by insert; a file replaced or cleared is deleted); undefined when the organization has no such item. */
  async update(trx: Executor, organizationId: string, id: string, changes: ResourceInput): Promise<ResourceItem | undefined> {
    const touchesFiles = this.files.names.some((name) => changes[name] !== undefined);
    const before = touchesFiles ? await this.find(trx, organizationId, id, true) : undefined;
    if (touchesFiles && !before) return undefined;
    if (touchesFiles) await this.files.check(trx, organizationId, changes, id);
    const values = this.columnValues(changes, false);
    const { rows } = await sql<Row>`
      update ${sql.table(this.table)}
      set ${sql.join([...Object.entries(values).map(([n, v]) => sql`${sql.ref(n)} = ${v}`), sql`updated_at = date_trunc('milliseconds', now())`])}
      where organization_id = ${organizationId} and id = ${id}
      returning ${this.selection}`.execute(trx);
    const item = rows[0] && this.toItem(rows[0]);
    if (before && item) {
      // what the update replaced or cleared goes
      const kept = this.files.held(item);
      await this.files.delete(
        trx,
        [...this.files.held(before)].filter(([name, file]) => kept.get(name) !== file).map(([, file]) => file),
      );
    }
    return item;
  }

  /** Deletes an item and the files it held; what it was, or undefined when the organization has no such item. */
  async delete(trx: Executor, organizationId: string, id: string): Promise<ResourceItem | undefined> {
    const { rows } = await sql<Row>`
      delete from ${sql.table(this.table)} where organization_id = ${organizationId} and id = ${id}
      returning ${this.selection}`.execute(trx);
    if (!rows[0]) return undefined;
    const item = this.toItem(rows[0]);
    await this.files.delete(trx, [...this.files.held(item).values()]);
    return item;
  }

  /** Column values of an input: every field when creating (an absent optional one is null), the given ones when updating. */
  private columnValues(input: ResourceInput, all: boolean): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    for (const [name, spec] of Object.entries(this.fields)) {
      const value = input[name];
      if (value === undefined && !all) continue;
      values[columnOf(name)] = value === undefined || value === null ? null : spec.type === 'decimal' ? String(value) : value;
    }
    return values;
  }
}
