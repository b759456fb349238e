/**
 * What `npm run new:resource` is asked to make (docs/resources.md): the resource's names and
 * fields, read from the command line and checked before anything is written. Every mistake is a
 * {@link SpecError}: one line naming it, exit status 1.
 */
import type { FieldSpec, FieldType } from '../../src/shared/resource-fields.js';
import { RESERVED } from './reserved.js';

export class SpecError extends Error {}

export type WriteRole = 'member' | 'admin' | 'owner';

export interface ResourceSpec {
  name: Names;
  plural: Names;
  fields: Array<{ name: string; spec: FieldSpec }>;
  writeRole: WriteRole;
  /** route data `limit` on the write routes: a meter of the plan catalogue */
  limit?: string;
  /** route data `requires: {feature}` on the write routes */
  feature?: string;
  dryRun: boolean;
}

/** One name in the spellings code needs: `time-entry`, `time_entry`, `timeEntry`, `TimeEntry`, `TIME_ENTRY`, `Time entry`, `time entry`. */
export interface Names {
  kebab: string;
  snake: string;
  camel: string;
  pascal: string;
  screaming: string;
  human: string;
  lower: string;
}

const KEBAB = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const TYPES: readonly FieldType[] = ['string', 'text', 'integer', 'decimal', 'boolean', 'date', 'datetime', 'enum', 'file', 'image'];

/** Field names every item has, or that would clash with its table's columns. */
const RESERVED_FIELDS = new Set(['id', 'created-at', 'updated-at', 'organization-id']);

export function names(kebab: string): Names {
  const words = kebab.split('-');
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  const lower = words.join(' ');
  return {
    kebab,
    snake: words.join('_'),
    camel: words[0] + words.slice(1).map(cap).join(''),
    pascal: words.map(cap).join(''),
    screaming: words.join('_').toUpperCase(),
    human: cap(lower),
    lower,
  };
}

/**
 * English's article before a word, by its sound: `an invoice`, `a time entry`, and the common
 * spellings whose first letter misleads (`a unit`, `a user`, `an hour`).
 */
export function article(word: string): 'a' | 'an' {
  if (/^(uni|use|usu|uti|ure|eu|one|once)/.test(word)) return 'a';
  if (/^(hour|honest|honou?r|heir)/.test(word)) return 'an';
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}

/** The MCP tools of a resource's five routes (docs/mcp.md): what the routes template names them. */
export function toolNames(spec: Pick<ResourceSpec, 'name' | 'plural'>): string[] {
  const { name, plural } = spec;
  return [`list-${plural.kebab}`, `get-${name.kebab}`, `create-${name.kebab}`, `update-${name.kebab}`, `delete-${name.kebab}`];
}

/** The longest tool name MCP clients take (and the start-up check allows). */
const TOOL_NAME_MAX = 64;

/** English's regular plural: `project` -> `projects`, `category` -> `categories`, `box` -> `boxes`. */
export function regularPlural(word: string): string {
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  return `${word}s`;
}

function checkName(what: string, name: string): void {
  if (!KEBAB.test(name)) throw new SpecError(`${what} "${name}" must be lower-case kebab-case (e.g. project, time-entry)`);
  if (RESERVED.has(name)) throw new SpecError(`${what} "${name}" is reserved (a word of SQL, TypeScript or the project's own paths)`);
}

/** `starts-at:datetime?`, `status:enum:draft|active`, `status:enum:draft,active:optional` */
export function parseField(text: string): { name: string; spec: FieldSpec } {
  let rest = text;
  let optional = false;
  if (rest.endsWith(':optional')) {
    optional = true;
    rest = rest.slice(0, -':optional'.length);
  } else if (rest.endsWith('?')) {
    optional = true;
    rest = rest.slice(0, -1);
  }
  const colon = rest.indexOf(':');
  if (colon < 0) throw new SpecError(`field "${text}" must be <name>:<type>, e.g. title:string`);
  const name = rest.slice(0, colon);
  const typeText = rest.slice(colon + 1);
  if (!KEBAB.test(name)) throw new SpecError(`field name "${name}" must be lower-case kebab-case (e.g. starts-at)`);
  if (RESERVED_FIELDS.has(name))
    throw new SpecError(`field name "${name}" is reserved: every item has id, created-at and updated-at, and belongs to an organization`);
  if (RESERVED.has(name)) throw new SpecError(`field name "${name}" is reserved (a word of SQL or TypeScript)`);
  if (typeText.startsWith('enum')) {
    const list = typeText.slice('enum'.length);
    if (!list.startsWith(':') || list.length === 1) throw new SpecError(`field "${name}": an enum needs values, e.g. ${name}:enum:draft|active`);
    const values = list.slice(1).split(/[|,]/);
    for (const value of values) {
      if (!KEBAB.test(value)) throw new SpecError(`field "${name}": enum value "${value}" must be a lower-case kebab-case word`);
    }
    const twice = values.find((v, i) => values.indexOf(v) !== i);
    if (twice) throw new SpecError(`field "${name}": enum value "${twice}" is given twice`);
    return { name, spec: optional ? { type: 'enum', values, optional } : { type: 'enum', values } };
  }
  if (!TYPES.includes(typeText as FieldType)) throw new SpecError(`field "${name}": unknown type "${typeText}" (one of ${TYPES.join(', ')}, enum:a|b)`);
  return { name, spec: optional ? { type: typeText as FieldType, optional } : { type: typeText as FieldType } };
}

const ROLES: readonly WriteRole[] = ['member', 'admin', 'owner'];

/** The command line after `new:resource --`. */
export function parseSpec(args: readonly string[]): ResourceSpec {
  const positional: string[] = [];
  const options: Record<string, string | true> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--dry-run') options['dry-run'] = true;
    else if (arg.startsWith('--')) {
      const [key, inline] = arg.slice(2).split('=', 2);
      if (!['write-role', 'plural', 'limit', 'feature'].includes(key)) throw new SpecError(`unknown option --${key}`);
      const value = inline ?? args[++i];
      if (value === undefined || value.startsWith('--')) throw new SpecError(`--${key} needs a value`);
      options[key] = value;
    } else positional.push(arg);
  }
  const [name, ...fieldArgs] = positional;
  if (!name) throw new SpecError('usage: npm run new:resource -- <name> <field>:<type>[?] ... [--write-role member|admin|owner] [--plural <word>] [--dry-run]');
  checkName('name', name);
  const plural = typeof options.plural === 'string' ? options.plural : regularPlural(name);
  checkName('plural', plural);
  if (plural === name) throw new SpecError(`plural "${plural}" must differ from the name`);
  const tooLong = toolNames({ name: names(name), plural: names(plural) }).find((tool) => tool.length > TOOL_NAME_MAX);
  if (tooLong) throw new SpecError(`"${name}" is too long: its MCP tool would be ${tooLong} (${tooLong.length} characters; at most ${TOOL_NAME_MAX})`);
  if (fieldArgs.length === 0) throw new SpecError('at least one field is needed, e.g. title:string');
  const fields = fieldArgs.map(parseField);
  const twice = fields.find((f, i) => fields.findIndex((g) => g.name === f.name) !== i);
  if (twice) throw new SpecError(`field "${twice.name}" is given twice`);
  const writeRole = (options['write-role'] ?? 'admin') as WriteRole;
  if (!ROLES.includes(writeRole)) throw new SpecError(`--write-role must be member, admin or owner, got "${String(writeRole)}"`);
  for (const key of ['limit', 'feature'] as const) {
    const value = options[key];
    if (typeof value === 'string' && !KEBAB.test(value)) throw new SpecError(`--${key} "${value}" must be a lower-case kebab-case id`);
  }
  return {
    name: names(name),
    plural: names(plural),
    fields,
    writeRole,
    limit: typeof options.limit === 'string' ? options.limit : undefined,
    feature: typeof options.feature === 'string' ? options.feature : undefined,
    dryRun: options['dry-run'] === true,
  };
}
