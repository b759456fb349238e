/**
 * Text a reader would see that never goes through `t()`: the catalog check sees only the ids of
 * `t`, `msg` and `rich`, so an English sentence written straight into a page or a toast would
 * show in English in every language. This reads the client's sources with the TypeScript parser
 * and lists each string or JSX text that reads as words (a letter first, then a space and a
 * lowercase word), or a component's default text (`loadingText = 'Loading…'`), outside those calls. Not counted: class lists and other attributes that are
 * not words for people, object keys, imports, what a thrown `Error` or `console` says (for the
 * developer), and code shown as code (`<code>`, `<kbd>`, `<pre>`).
 */
import { join, relative } from 'node:path';
import ts from 'typescript';
import { clientFiles, parseClientFile } from './client-messages.js';

const MARKERS = new Set(['t', 'msg', 'rich']);
/** attributes whose values are for the browser or the code, not the reader */
const NOT_WORDS = new Set([
  'class',
  'id',
  'href',
  'type',
  'name',
  'autocomplete',
  'inputMode',
  'pattern',
  'rel',
  'target',
  'role',
  'method',
  'for',
  'accept',
  'dir',
  'lang',
  'src',
  'action',
  'variant',
  'tone',
  'key',
  'form',
]);
const CODE_TAGS = new Set(['code', 'kbd', 'pre']);
const READS_AS_WORDS = /^[A-Za-z][^\n]*\s[a-z]{2,}/;
const CLASS_LIST = /^[a-z0-9:\-/[\].\s!%()#_&>*=~]+$/;

/**
 * Texts the request layer writes in English for the code that handles them; the reader sees its
 * own words instead (shell/events.ts `request/failed` says a failure by its kind).
 */
const ALLOWED = new Set(['src/client/http.ts: "Network error: "']);

function forTheDeveloper(node: ts.Node): boolean {
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    if (ts.isThrowStatement(at)) return true;
    if (ts.isNewExpression(at) && /Error$/.test(at.expression.getText())) return true;
    if (ts.isCallExpression(at) && /^console\./.test(at.expression.getText())) return true;
    if (ts.isJsxElement(at) && CODE_TAGS.has(at.openingElement.tagName.getText())) return true;
    if (ts.isFunctionLike(at)) return false;
  }
  return false;
}

/** `file:line: "text"` for each text outside a message, in the client's sources under `root`. */
export function englishOutsideMessages(root: string): string[] {
  const found: string[] = [];
  for (const file of clientFiles(join(root, 'src/client'))) {
    if (file.includes('/messages/')) continue;
    const label = relative(root, file);
    const source = parseClientFile(file);
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && MARKERS.has(node.expression.text)) {
        for (const arg of node.arguments.slice(1)) visit(arg);
        return;
      }
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
      if (ts.isJsxAttribute(node) && NOT_WORDS.has(node.name.getText())) return;
      let text: string | undefined;
      if (
        ts.isStringLiteral(node) ||
        ts.isNoSubstitutionTemplateLiteral(node) ||
        ts.isTemplateHead(node) ||
        ts.isTemplateMiddle(node) ||
        ts.isTemplateTail(node)
      )
        text = node.text;
      else if (ts.isJsxText(node)) text = node.text.trim();
      const isKey = node.parent !== undefined && ts.isPropertyAssignment(node.parent) && node.parent.name === node;
      // a component's default text (`label = 'Close'`) is a word for the reader even when it is one
      const isDefault = node.parent !== undefined && (ts.isParameter(node.parent) || ts.isBindingElement(node.parent)) && node.parent.initializer === node;
      const words = text !== undefined && (READS_AS_WORDS.test(text) || (isDefault && /^[A-Z][a-z]/.test(text)));
      if (text && words && !CLASS_LIST.test(text) && !isKey && !forTheDeveloper(node)) {
        const said = `${label}: ${JSON.stringify(text)}`;
        if (!ALLOWED.has(said)) found.push(`${label}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${JSON.stringify(text)}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}
