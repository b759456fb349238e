/**
 * The client's layout reads right to left as well as left to right only with logical CSS
 * (docs/i18n.md, "Right to left"): `ms-4`, not `ml-4`; `text-start`, not `text-left`. This finds
 * the Tailwind classes in the client's sources that name a physical side, so `npm test` refuses
 * them (test/i18n/logical-css.test.ts): every string and template text is read as a class list.
 */
import { join, relative } from 'node:path';
import ts from 'typescript';
import { clientFiles, parseClientFile } from './client-messages.js';

/** A class (its variants, `md:hover:`, taken off) that names a physical side, and its logical twin. */
const PHYSICAL: Array<[RegExp, string]> = [
  [/^-?m[lr]-/, 'ms-/me-'],
  [/^-?p[lr]-/, 'ps-/pe-'],
  [/^-?scroll-[mp][lr]-/, 'scroll-ms-/scroll-me-, scroll-ps-/scroll-pe-'],
  [/^-?(left|right)-/, 'start-/end-'],
  [/^text-(left|right)$/, 'text-start/text-end'],
  [/^border-[lr](-|$)/, 'border-s/border-e'],
  [/^rounded-([lr]|[tb][lr])(-|$)/, 'rounded-s/-e, rounded-ss/-se/-es/-ee'],
  [/^(float|clear)-(left|right)$/, 'float-start/float-end'],
];

export interface PhysicalClass {
  at: string;
  className: string;
  instead: string;
}

/** The physical classes in the client's sources under `root/src/client`. */
export function physicalClasses(root: string): PhysicalClass[] {
  const found: PhysicalClass[] = [];
  for (const file of clientFiles(join(root, 'src/client'))) {
    const source = parseClientFile(file);
    const check = (text: string, node: ts.Node) => {
      for (const token of text.split(/\s+/)) {
        const className = token.slice(token.lastIndexOf(':') + 1).replace(/^!/, '');
        const hit = PHYSICAL.find(([re]) => re.test(className));
        if (hit)
          found.push({ at: `${relative(root, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`, className: token, instead: hit[1] });
      }
    };
    const visit = (node: ts.Node) => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) check(node.text, node);
      else if (ts.isTemplateExpression(node)) for (const part of [node.head, ...node.templateSpans.map((s) => s.literal)]) check(part.text, part);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}
