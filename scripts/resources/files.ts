/**
 * What `new:resource` writes and changes (docs/resources.md): the files of templates/resource/,
 * a working resource named "sample item" written as ordinary TypeScript, with its names spelled
 * for the new resource and its fields put in; and one entry in each list that composes the
 * project (MODULES, FEATURES, the migrations, the table types). Nothing is written here: the
 * caller writes the plan once every check passed.
 */
import { existsSync, globSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LOCALES } from '../../src/shared/locales.js';
import { columnOf, humanize, isFileType, type FieldSpec } from '../../src/shared/resource-fields.js';
import { messagesOf } from '../i18n/client-messages.js';
import { messagesOfServerSource } from '../i18n/server-messages.js';
import { article, names, SpecError, type Names, type ResourceSpec } from './spec.js';

export const TEMPLATE_DIR = 'templates/resource';
const SAMPLE = { name: names('sample-item'), plural: names('sample-items') };

export interface FileChange {
  path: string;
  content: string;
  /** a file that exists and is changed (else a new one) */
  changed: boolean;
}

/** The sample's spellings, longest first (the plural's before the name's), mapped to the resource's. */
function spellings(spec: Pick<ResourceSpec, 'name' | 'plural'>): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const [sample, real] of [
    [SAMPLE.plural, spec.plural],
    [SAMPLE.name, spec.name],
  ] as const) {
    for (const key of Object.keys(sample) as Array<keyof Names>) pairs.push([sample[key], real[key]]);
  }
  // the article goes with the name's sound: "a sample item" is "an invoice"
  const articleWord = article(spec.name.lower);
  pairs.push([`a ${SAMPLE.name.lower}`, `${articleWord} ${spec.name.lower}`], [`A ${SAMPLE.name.lower}`, `A${articleWord.slice(1)} ${spec.name.lower}`]);
  return pairs.sort((a, b) => b[0].length - a[0].length);
}

/** The text with every spelling of "sample item(s)" replaced by the resource's. */
export function respell(text: string, spec: Pick<ResourceSpec, 'name' | 'plural'>): string {
  const pairs = spellings(spec);
  const map = new Map(pairs);
  // an article is a word of its own: the "a" that ends "data" is not one
  const alternative = (from: string) => (/^[aA] /.test(from) ? '(?<![A-Za-z])' : '') + from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(pairs.map(([from]) => alternative(from)).join('|'), 'g');
  return text.replace(pattern, (found) => map.get(found)!);
}

/** One field of the fields object: `'starts-at': { type: 'datetime', optional: true },` */
function fieldLine(name: string, spec: FieldSpec): string {
  const key = /^[a-z][a-z0-9]*$/.test(name) ? name : `'${name}'`;
  const parts = [`type: '${spec.type}'`];
  if (spec.values) parts.push(`values: [${spec.values.map((v) => `'${v}'`).join(', ')}]`);
  if (spec.optional) parts.push('optional: true');
  return `  ${key}: { ${parts.join(', ')} },`;
}

/** Replaces the body of the `..._FIELDS = {` object of a fields file with the resource's fields. */
function withFields(text: string, spec: ResourceSpec, where: string): string {
  const start = text.indexOf('_FIELDS = {\n');
  const end = text.indexOf('} as const satisfies FieldSpecs;', start);
  if (start < 0 || end < 0) throw new Error(`${where}: the template has no fields object`);
  const head = text.slice(0, start + '_FIELDS = {\n'.length);
  return head + spec.fields.map((f) => `${fieldLine(f.name, f.spec)}\n`).join('') + text.slice(end);
}

/** The client's `labels` of the resource's fields and enum values, as message ids. */
function withLabels(text: string, spec: ResourceSpec, where: string): string {
  const block = /^ {2}labels: \{\n[\s\S]*?^ {2}\},\n/m;
  if (!block.test(text)) throw new Error(`${where}: the template has no labels`);
  const quoted = (key: string) => (/^[a-z][a-z0-9]*$/.test(key) ? key : `'${key}'`);
  const words = (text: string) => `msg('${text.replaceAll("'", "\\'")}')`;
  const lines = spec.fields.flatMap((f) => [
    `    ${quoted(f.name)}: ${words(humanize(f.name))},`,
    ...(f.spec.values ?? []).map((v) => `    ${quoted(`${f.name}.${v}`)}: ${words(humanize(v))},`),
  ]);
  return text.replace(block, `  labels: {\n${lines.join('\n')}\n  },\n`);
}

/**
 * The client feature's catalogs (`src/client/<plural>/messages/<locale>.json`): every id its
 * files use, each with its English text until someone translates it (`npm run i18n:status` lists them).
 */
function clientCatalogs(spec: ResourceSpec, changes: FileChange[]): FileChange[] {
  const folder = `src/client/${spec.plural.kebab}/`;
  return catalogFiles(folder, changes, (c) => messagesOf(c.path, c.content, spec.plural.kebab).uses);
}

/** The server feature's catalogs (`src/<plural>/messages/<locale>.json`, declared by its messages/index.ts), as the client's. */
function serverCatalogs(spec: ResourceSpec, changes: FileChange[]): FileChange[] {
  return catalogFiles(`src/${spec.plural.kebab}/`, changes, (c) => messagesOfServerSource(c.path, c.content, spec.plural.kebab).uses);
}

function catalogFiles(folder: string, changes: FileChange[], usesOf: (change: FileChange) => Array<{ id: string }>): FileChange[] {
  const ids = new Set(changes.filter((c) => c.path.startsWith(folder) && /\.tsx?$/.test(c.path)).flatMap((c) => usesOf(c).map((u) => u.id)));
  const catalog = `${JSON.stringify(Object.fromEntries([...ids].sort().map((id) => [id, id])), null, 2)}\n`;
  return LOCALES.filter((l) => l !== 'en').map((locale) => ({ path: `${folder}messages/${locale}.json`, content: catalog, changed: false }));
}

const COLUMN_TYPES: Record<FieldSpec['type'], string> = {
  string: `'text'`,
  text: `'text'`,
  integer: `'integer'`,
  decimal: `'numeric'`,
  boolean: `'boolean'`,
  date: `'date'`,
  datetime: `'timestamptz'`,
  enum: `'text'`,
  file: `'uuid'`,
  image: `'uuid'`,
};

function columnLine(name: string, spec: FieldSpec): string {
  const column = columnOf(name);
  const checks: string[] = [];
  if (spec.type === 'string') checks.push(`length(${column}) between 1 and 255`);
  if (spec.type === 'text') checks.push(`length(${column}) <= 65535`);
  if (spec.type === 'enum') checks.push(`${column} in (${spec.values!.map((v) => `''${v}''`).join(', ')})`);
  // a file field holds a stored file's id, one item's only; the file's deletion (its organization's) clears it
  const references = spec.type === 'file' || spec.type === 'image' ? ".unique().references('stored_file.id').onDelete('set null')" : '';
  const constraints = [spec.optional ? '' : '.notNull()', references, ...checks.map((c) => `.check(sql\`${c.replaceAll("''", "'")}\`)`)].join('');
  return constraints
    ? `    .addColumn('${column}', ${COLUMN_TYPES[spec.type]}, (c) => c${constraints})`
    : `    .addColumn('${column}', ${COLUMN_TYPES[spec.type]})`;
}

/** The migration template with the resource's columns in place of the sample's `name`. */
function withColumns(text: string, spec: ResourceSpec): string {
  const sampleColumn = "    .addColumn('name', 'text', (c) => c.notNull())\n";
  if (!text.includes(sampleColumn)) throw new Error('the migration template has no sample column');
  return text.replace(sampleColumn, spec.fields.map((f) => `${columnLine(f.name, f.spec)}\n`).join(''));
}

const TS_TYPES: Record<FieldSpec['type'], string> = {
  string: 'string',
  text: 'string',
  integer: 'number',
  decimal: 'string',
  boolean: 'boolean',
  date: 'string',
  datetime: 'Date',
  enum: 'string',
  file: 'string',
  image: 'string',
};

/** The Kysely table type of the resource, for src/db/schema.ts. */
function tableType(spec: ResourceSpec): string {
  const columns = spec.fields.map((f) => {
    const type = f.spec.type === 'enum' ? f.spec.values!.map((v) => `'${v}'`).join(' | ') : TS_TYPES[f.spec.type];
    return `  ${columnOf(f.name)}: ${type}${f.spec.optional ? ' | null' : ''};`;
  });
  return [
    `/** ${spec.plural.human} of an organization (docs/${spec.plural.kebab}.md); dates and decimals are read as text. */`,
    `export interface ${spec.name.pascal}Table {`,
    '  id: Generated<string>;',
    '  organization_id: string;',
    ...columns,
    '  created_at: Generated<Date>;',
    '  updated_at: Generated<Date>;',
    '}',
    '',
  ].join('\n');
}

/** `--limit` and `--feature` as route data on the write routes (those with the write scope). */
function withWriteRouteData(routes: string, spec: ResourceSpec): string {
  const extra = [spec.limit && `limit: '${spec.limit}',`, spec.feature && `requires: { feature: '${spec.feature}' },`].filter(Boolean);
  if (extra.length === 0) return routes;
  const scope = `        scopes: ['${spec.plural.kebab}:write'],\n`;
  if (!routes.includes(scope)) throw new Error('the routes template has no write scope');
  return routes.replaceAll(scope, scope + extra.map((line) => `        ${line}\n`).join(''));
}

/** The template's files of file fields: written only for a resource with a `file` or `image` field. */
const FILE_FIELDS_ONLY = ['test/sample-items/files.test.ts'];
/** A passage of a template for a resource with file fields only: `<!-- file fields -->` ... `<!-- /file fields -->`, each on a line of its own. */
const FILE_FIELDS_PASSAGE = /^<!-- file fields -->\n([\s\S]*?)^<!-- \/file fields -->\n/gm;

/** The next migration's number, four digits. */
function nextMigration(root: string): string {
  const numbers = readdirSync(join(root, 'src/db/migrations')).map((f) => Number(/^(\d{4})_/.exec(f)?.[1] ?? 0));
  return String(Math.max(0, ...numbers) + 1).padStart(4, '0');
}

function read(root: string, path: string): string {
  return readFileSync(join(root, path), 'utf8');
}

/** Inserts `line` after the last line of `text` that starts with `after`. */
function insertAfterLast(text: string, after: string, line: string, where: string): string {
  const lines = text.split('\n');
  const index = lines.findLastIndex((l) => l.startsWith(after));
  if (index < 0) throw new Error(`${where}: no line starting with "${after}"`);
  lines.splice(index + 1, 0, line);
  return lines.join('\n');
}

/** Inserts `line` before the first line of `text` equal to `before` (after `from`, when given). */
function insertBefore(text: string, before: string, line: string, where: string, from = 0): string {
  const lines = text.split('\n');
  const index = lines.findIndex((l, i) => i >= from && l === before);
  if (index < 0) throw new Error(`${where}: no line "${before}"`);
  lines.splice(index, 0, line);
  return lines.join('\n');
}

export function registerMigration(root: string, id: string): FileChange {
  const path = 'src/db/migrate.ts';
  let text = read(root, path);
  const variable = `m${id.slice(0, 4)}`;
  text = insertAfterLast(text, 'import * as m', `import * as ${variable} from './migrations/${id}.js';`, path);
  const listStart = text.split('\n').findIndex((l) => l.startsWith('export const MIGRATIONS'));
  text = insertBefore(text, '};', `  '${id}': ${variable},`, path, listStart);
  return { path, content: text, changed: true };
}

/** The templates' files, as paths relative to the template directory. */
function templateFiles(root: string): string[] {
  const base = join(root, TEMPLATE_DIR);
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(base, path));
    }
  };
  walk(base);
  return out.sort();
}

/** Whether any source file under src/ holds `needle`. */
function sourceHolds(root: string, needle: string): string | undefined {
  for (const file of globSync('src/**/*.{ts,tsx}', { cwd: root })) {
    if (readFileSync(join(root, file), 'utf8').includes(needle)) return file;
  }
  return undefined;
}

/** Refuses a resource whose names the project already uses. */
function checkUnused(root: string, spec: ResourceSpec): void {
  const { plural, name } = spec;
  for (const dir of [`src/${plural.kebab}`, `src/client/${plural.kebab}`, `test/${plural.kebab}`, `docs/${plural.kebab}.md`]) {
    if (existsSync(join(root, dir))) throw new SpecError(`"${plural.kebab}" exists: ${dir}`);
  }
  const schema = read(root, 'src/db/schema.ts');
  if (new RegExp(`^  ${name.snake}: `, 'm').test(schema)) throw new SpecError(`a table "${name.snake}" exists (src/db/schema.ts)`);
  const migrations = globSync('src/db/migrations/*.ts', { cwd: root }).find((f) => read(root, f).includes(`createTable('${name.snake}')`));
  if (migrations) throw new SpecError(`a table "${name.snake}" exists (${migrations})`);
  for (const [needle, what] of [
    [`'/:id/${plural.kebab}`, 'a path under /api/orgs/:id/'],
    [`/orgs/:id/${plural.kebab}`, 'a path under /api/orgs/:id/ or a client route'],
    [`kind: '${plural.kebab}/`, 'a query kind group'],
    [`name: '${plural.kebab}'`, 'a module'],
  ] as const) {
    const file = sourceHolds(root, needle);
    if (file) throw new SpecError(`"${plural.kebab}" is taken: ${what} (${file})`);
  }
}

/** Everything `new:resource` writes and changes, checked: a name in use or a file that exists is a SpecError. */
export function planResource(root: string, spec: ResourceSpec): FileChange[] {
  checkUnused(root, spec);
  const migrationId = `${nextMigration(root)}_${spec.plural.snake}`;
  const changes: FileChange[] = [];
  const hasFiles = spec.fields.some((f) => isFileType(f.spec.type));
  for (const file of templateFiles(root)) {
    if (file.includes('0000_drop_') || (!hasFiles && FILE_FIELDS_ONLY.includes(file))) continue;
    const path = respell(file, spec).replace(`0000_${spec.plural.snake}`, migrationId);
    let content = read(root, join(TEMPLATE_DIR, file));
    if (file.endsWith('/fields.ts')) content = withFields(content, spec, file);
    if (file.startsWith('src/client/') && file.endsWith('/fields.ts')) content = withLabels(content, spec, file);
    if (file.includes('/migrations/')) content = withColumns(content, spec);
    content = content.replace(FILE_FIELDS_PASSAGE, (_passage, kept: string) => (hasFiles ? kept : ''));
    content = respell(content, spec);
    // `body['sample-items']` needs its quotes; a name that is a plain word (`tasks`, `task`) reads, and lints, as `body.tasks`
    // (a member access only: an array literal `['tasks']` stays)
    for (const key of [spec.name.kebab, spec.plural.kebab].filter((k) => /^[a-z]\w*$/.test(k)))
      content = content.replace(new RegExp(`(?<=[\\w)\\]])(\\?\\.)?\\['${key}'\\]`, 'g'), (_m, optional?: string) => `${optional ?? '.'}${key}`);
    // the write role: the server's route data, and the client's (which shows write controls)
    content = content
      .replace("_WRITE_ROLE: OrgRole = 'admin';", `_WRITE_ROLE: OrgRole = '${spec.writeRole}';`)
      .replace("  writeRole: 'admin',", `  writeRole: '${spec.writeRole}',`)
      .replace('the write role (`admin`)', `the write role (\`${spec.writeRole}\`)`);
    if (path === `src/${spec.plural.kebab}/routes.ts`) content = withWriteRouteData(content, spec);
    if (existsSync(join(root, path))) throw new SpecError(`${path} exists: nothing was written`);
    changes.push({ path, content, changed: false });
  }
  changes.push(...clientCatalogs(spec, changes), ...serverCatalogs(spec, changes));
  const module = `${spec.plural.camel}Module`;
  let system = read(root, 'src/system.ts');
  system = insertAfterLast(system, 'import ', `import { ${module} } from './${spec.plural.kebab}/module.js';`, 'src/system.ts');
  system = insertBefore(system, '  queryModule, // last: serves the query kinds of every module above', `  ${module},`, 'src/system.ts');
  changes.push({ path: 'src/system.ts', content: system, changed: true });

  let app = read(root, 'src/client/app.ts');
  app = insertAfterLast(app, 'import ', `import { ${spec.plural.camel} } from './${spec.plural.kebab}/feature.js';`, 'src/client/app.ts');
  // on one line or laid out on several (the formatter's, once the list is longer than a line); written back on one
  const features = /^export const FEATURES: readonly Feature\[\] = \[([^\]]*)\];$/m;
  if (!features.test(app)) throw new Error('src/client/app.ts: no FEATURES list');
  app = app.replace(features, (_line, list: string) => {
    const items = list
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    return `export const FEATURES: readonly Feature[] = [${[...items, spec.plural.camel].join(', ')}];`;
  });
  changes.push({ path: 'src/client/app.ts', content: app, changed: true });

  changes.push(registerMigration(root, migrationId));

  let schema = read(root, 'src/db/schema.ts');
  schema = insertBefore(schema, 'export interface DatabaseSchema {', tableType(spec), 'src/db/schema.ts');
  const schemaStart = schema.split('\n').indexOf('export interface DatabaseSchema {');
  schema = insertBefore(schema, '}', `  ${spec.name.snake}: ${spec.name.pascal}Table;`, 'src/db/schema.ts', schemaStart);
  changes.push({ path: 'src/db/schema.ts', content: schema, changed: true });
  return changes;
}
