/**
 * A structural check of EDN text, run before parsing because edn-data is lenient: it
 * returns null for unclosed input, ignores stray closing brackets and drops the odd entry
 * of a map. This scanner insists on balanced, properly nested collections, an even number
 * of forms in each map, and exactly one top-level value.
 */
const CLOSERS: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
const DELIMITERS = new Set([' ', '\t', '\n', '\r', ',', '(', ')', '[', ']', '{', '}', '"', ';']);

interface Frame {
  close: string;
  isMap: boolean;
  forms: number;
}

/** Returns a description of the first structural problem, or undefined when the text is sound. */
export function ednStructureProblem(text: string): string | undefined {
  const stack: Frame[] = [{ close: '', isMap: false, forms: 0 }];
  let i = 0;
  const completeForm = () => {
    stack[stack.length - 1].forms++;
  };
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === ',') { i++; continue; }
    if (c === ';') { while (i < text.length && text[i] !== '\n') i++; continue; }
    if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      if (i >= text.length) return 'unterminated string';
      i++;
      completeForm();
      continue;
    }
    if (c === '\\') {
      i += 2;
      while (i < text.length && !DELIMITERS.has(text[i])) i++;
      completeForm();
      continue;
    }
    if (c === '(' || c === '[' || c === '{') {
      stack.push({ close: CLOSERS[c], isMap: c === '{', forms: 0 });
      i++;
      continue;
    }
    if (c === '#' && text[i + 1] === '{') {
      stack.push({ close: '}', isMap: false, forms: 0 });
      i += 2;
      continue;
    }
    if (c === '#' && text[i + 1] === '_') {
      // the discarded form is counted when it completes; take it back now
      stack[stack.length - 1].forms--;
      i += 2;
      continue;
    }
    if (c === '#') {
      // a tag: `#inst "..."` is one form, counted when its value completes
      i++;
      while (i < text.length && !DELIMITERS.has(text[i])) i++;
      continue;
    }
    if (c === ')' || c === ']' || c === '}') {
      const frame = stack.pop();
      if (!frame || frame.close !== c || stack.length === 0) return `unexpected "${c}"`;
      if (frame.forms < 0) return 'tag or discard without a value';
      if (frame.isMap && frame.forms % 2 !== 0) return 'map with an odd number of forms';
      i++;
      completeForm();
      continue;
    }
    while (i < text.length && !DELIMITERS.has(text[i])) i++;
    completeForm();
  }
  if (stack.length !== 1) return `unclosed "${stack[stack.length - 1].close === '}' ? '{' : stack[stack.length - 1].close === ']' ? '[' : '('}"`;
  if (stack[0].forms !== 1) return stack[0].forms === 0 ? 'no value' : 'more than one top-level value';
  return undefined;
}
