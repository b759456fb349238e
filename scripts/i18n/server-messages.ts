/**
 * The server's message ids, read from its sources with the TypeScript parser (docs/i18n.md):
 * what the catalog check and `npm run i18n:status` compare the catalogs with. An id is the
 * English text the code writes where a message goes:
 * - the message argument of the error helpers (`forbidden('…')`, `requestCoercion(where, errors, '…')`, …);
 * - `message: '…'` in an object that is an error body (it has `type`) or a field's error (it has `path`);
 * - a parameter `message` defaulting to a text;
 * - `phrase('…', values)`, `msg('…')` (a text kept in a table) and `say('…')` (errors.ts's field reasons) anywhere.
 * A conditional's two texts are both ids. A text built at run time in one of these places (a
 * template with `${…}`, a `+`) is a problem: it has no id, so it would never be translated.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** the helper's name → the index of its message argument */
const HELPER_MESSAGE_ARGUMENT: Record<string, number> = {
  forbidden: 0,
  notFound: 0,
  conflict: 0,
  unauthorized: 0,
  paymentRequired: 0,
  invalidToken: 0,
  serviceUnavailable: 0,
  malformedBody: 0,
  tooManyRequests: 1,
  requestCoercion: 2,
};
/** `say` is the callback errors.ts formats its own field reasons with */
const MARKERS = new Set(['phrase', 'msg', 'say']);

export interface MessageUse {
  id: string;
  /** the feature folder (`account`, `http`): whose catalog holds it */
  feature: string;
  at: string;
}

export interface ServerMessages {
  uses: MessageUse[];
  /** places a message is built at run time (no id): each must become a phrase */
  problems: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'client' || name === 'migrations' ? [] : sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The ids of one server source file of `feature`, and its problems (`label`: the file as reports name it). */
export function messagesOfServerSource(file: string, text: string, feature: string, label = file): ServerMessages {
  const uses: MessageUse[] = [];
  const problems: string[] = [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const where = (node: ts.Node) => `${label}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const take = (node: ts.Expression | undefined) => {
    if (!node) return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) uses.push({ id: node.text, feature, at: where(node) });
    else if (ts.isConditionalExpression(node)) {
      take(node.whenTrue);
      take(node.whenFalse);
    } else if (ts.isParenthesizedExpression(node)) take(node.expression);
    else if (ts.isTemplateExpression(node) || (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken))
      problems.push(`${where(node)}: a message built at run time; write it as phrase('… {name} …', { name })`);
  };
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
      const name = node.expression.text;
      if (MARKERS.has(name)) take(node.arguments[0]);
      const index = HELPER_MESSAGE_ARGUMENT[name];
      if (index !== undefined) take(node.arguments[index]);
    }
    if (ts.isObjectLiteralExpression(node)) {
      const props = new Map<string, ts.Expression>();
      for (const p of node.properties)
        if (ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name))) props.set(p.name.text, p.initializer);
      if (props.has('message') && (props.has('type') || props.has('path'))) take(props.get('message'));
    }
    if (ts.isParameter(node) && ts.isIdentifier(node.name) && node.name.text === 'message') take(node.initializer);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { uses, problems };
}

/** The server's message ids under `root/src` (the client's are its own). */
export function serverMessages(root: string): ServerMessages {
  const uses: MessageUse[] = [];
  const problems: string[] = [];
  for (const file of sourceFiles(join(root, 'src'))) {
    const rel = relative(join(root, 'src'), file);
    const feature = rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : rel.replace(/\.ts$/, '');
    if (feature === 'shared') continue;
    const found = messagesOfServerSource(file, readFileSync(file, 'utf8'), feature, relative(root, file));
    uses.push(...found.uses);
    problems.push(...found.problems);
  }
  return { uses, problems };
}
