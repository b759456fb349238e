/**
 * The browser client's message ids, read from its sources with the TypeScript parser
 * (docs/i18n.md): the first argument of `t('…')`, `msg('…')` and `rich('…')`. The catalog check,
 * `npm run i18n:status` and the build (vite-plugin.ts, which numbers the ids) all read them here.
 * A message built at run time there (a template with `${…}`, a `+`) is a problem: it has no id.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import type { MessageUse } from './server-messages.js';

const MARKERS = new Set(['t', 'msg', 'rich']);

export interface ClientMessageUse extends MessageUse {
  /** where the literal is in its file: [start, end) */
  span: [number, number];
}

/** a place that builds a message at run time, and the feature it is in */
export interface Problem {
  feature: string;
  text: string;
}

export function clientFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'public' ? [] : clientFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** A client source file read by the TypeScript parser (a `.tsx` one as TSX). */
export function parseClientFile(file: string, text = readFileSync(file, 'utf8')): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
}

/** A client file's feature folder (`account`, `ui`); the files beside app.ts count as the shell's. */
export function clientFeature(root: string, file: string): string {
  const rel = relative(join(root, 'src/client'), file);
  return rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : 'shell';
}

/** Whether a call runs when its module loads (no function around it). */
function atModuleLoad(node: ts.Node): boolean {
  for (let at = node.parent; at; at = at.parent) if (ts.isFunctionLike(at) || ts.isClassLike(at)) return false;
  return true;
}

/** The ids of one source file, with their places, and its problems. */
export function messagesOf(file: string, text: string, feature: string, label = file): { uses: ClientMessageUse[]; problems: Problem[] } {
  const uses: ClientMessageUse[] = [];
  const problems: Problem[] = [];
  const source = parseClientFile(file, text);
  const where = (node: ts.Node) => `${label}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && MARKERS.has(node.expression.text)) {
      const arg = node.arguments[0];
      if (arg && (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg))) {
        uses.push({ id: arg.text, feature, at: where(arg), span: [arg.getStart(), arg.getEnd()] });
        if (node.expression.text !== 'msg' && atModuleLoad(node))
          problems.push({
            feature,
            text: `${where(arg)}: ${node.expression.text}() runs when the module loads, before a locale is chosen; keep msg('…') there and call t() where it shows`,
          });
      } else if (arg && (ts.isTemplateExpression(arg) || (ts.isBinaryExpression(arg) && arg.operatorToken.kind === ts.SyntaxKind.PlusToken))) {
        problems.push({ feature, text: `${where(arg)}: a message built at run time; write it as t('… {name} …', { name })` });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { uses, problems };
}

/** Every id of the client under `root/src/client`. */
export function clientMessages(root: string): { uses: ClientMessageUse[]; problems: Problem[] } {
  const uses: ClientMessageUse[] = [];
  const problems: Problem[] = [];
  for (const file of clientFiles(join(root, 'src/client'))) {
    const found = messagesOf(file, readFileSync(file, 'utf8'), clientFeature(root, file), relative(root, file));
    uses.push(...found.uses);
    problems.push(...found.problems);
  }
  return { uses, problems };
}
