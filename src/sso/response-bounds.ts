/**
 * What a posted SAMLResponse may cost before it is parsed (docs/sso.md). The signature
 * library's XPath work grows with the square of the element count, on the event loop: a response
 * under the byte limit made of ~45,000 empty elements held the whole server for half a minute.
 * So the decoded text is scanned once, cheaply, for its elements and its depth, and refused over
 * the bounds before node-saml or xml-crypto see it. The scan over-counts (a `<` in a comment or
 * CDATA is taken as an element), which only ever refuses sooner; a genuine response has a few
 * dozen elements, a few levels deep.
 */

/** the most elements a response may have (a signed response with several attributes has well under 200) */
export const MAX_RESPONSE_ELEMENTS = 5_000;
/** the deepest nesting a response may have (Response > Assertion > Signature > KeyInfo > X509Data > X509Certificate is 6) */
export const MAX_RESPONSE_DEPTH = 64;

/** an element's start or end tag, or an empty-element tag: `<name`, `</name`, and whether it ends `/>` */
const TAG = /<(\/?)[A-Za-z_][^<>]*?(\/?)>/g;

export interface ResponseShape {
  elements: number;
  depth: number;
}

/** Counts the elements and the deepest nesting, stopping as soon as either bound is passed. */
export function responseShape(xml: string): ResponseShape {
  let elements = 0;
  let open = 0;
  let depth = 0;
  for (const [, closing, selfClosing] of xml.matchAll(TAG)) {
    if (closing) {
      open = Math.max(0, open - 1);
      continue;
    }
    elements++;
    if (!selfClosing) depth = Math.max(depth, ++open);
    if (elements > MAX_RESPONSE_ELEMENTS || depth > MAX_RESPONSE_DEPTH) break;
  }
  return { elements, depth };
}

/**
 * The request id a response says it answers (the Response's `InResponseTo`), read before any
 * validation: only a key for the per-request limit, never trusted for anything else.
 */
export function claimedRequestId(xml: string): string | undefined {
  return /<(?:[\w-]+:)?Response\b[^>]*?\sInResponseTo="([^"]{1,256})"/.exec(xml)?.[1];
}
