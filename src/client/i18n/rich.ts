/**
 * A message with markup in it: `rich('Send it as <0>Bearer sk_…</0>.', [(text) => <code>{text}</code>])`.
 * `<n>…</n>` is rendered by the part `n` (a function given the translated text inside), `<n/>`
 * stands for the part `n` as it is (an element). Values are put in after the markup is read, so a
 * value that looks like markup (an organization named `<0>`) stays text.
 */
import type { ComponentChildren } from 'preact';
import { t, type MessageId, type MessageValues } from './words.js';

export type RichPart = ((inner: ComponentChildren) => ComponentChildren) | ComponentChildren;

const TAG = /<(\d+)>([\s\S]*?)<\/\1>|<(\d+)\/>/g;
// private-use characters mark where a text value goes (values are kept out of the markup)
const SLOT = /\uE000(\d+)\uE001/g;

function withValues(text: string, texts: string[]): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let last = 0;
  for (const m of text.matchAll(SLOT)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(texts[Number(m[1])]);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

export function rich(id: MessageId, parts: readonly RichPart[], values?: MessageValues): ComponentChildren[] {
  const texts: string[] = [];
  const slotted = values
    ? Object.fromEntries(Object.entries(values).map(([k, v]) => [k, typeof v === 'string' ? `\uE000${texts.push(v) - 1}\uE001` : v]))
    : undefined;
  const text = t(id, slotted);
  const out: ComponentChildren[] = [];
  let last = 0;
  for (const m of text.matchAll(TAG)) {
    if (m.index > last) out.push(...withValues(text.slice(last, m.index), texts));
    const part = parts[Number(m[1] ?? m[3])];
    out.push(m[1] !== undefined && typeof part === 'function' ? part(withValues(m[2], texts)) : (part as ComponentChildren));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(...withValues(text.slice(last), texts));
  return out;
}
