/**
 * Reading an identity provider's pasted SAML metadata: its entity id, the HTTP-Redirect
 * SingleSignOnService URL and its signing certificates. Hostile input is refused with a reason
 * (a 400 for the owner), never thrown as anything else: no DTD or entity declarations at all (no
 * entity expansion, no external entities), a size bound (the route's schema), an XML parser that
 * stops at the first error. The parser is loaded at the first metadata read (saml-library.ts says why).
 */
import { X509Certificate } from 'node:crypto';
import type { Element } from '@xmldom/xmldom';

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

export interface IdpMetadata {
  entityId: string;
  ssoUrl: string;
  /** base64 DER, as in the metadata */
  certificates: string[];
  /** the latest expiry among the certificates */
  certificateExpiresAt: Date;
}

/** Metadata we cannot use: the message says why (shown to the owner). */
export class InvalidMetadata extends Error {}

/** Refuses document type declarations: the way to entity expansion and external entities in every XML parser. */
export function assertNoDoctype(xml: string): void {
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new InvalidMetadata('XML with a DOCTYPE or ENTITY declaration is not accepted');
}

/** Parses `xml` strictly: any parser error (not only fatal ones) refuses it. */
export async function parseStrict(xml: string): Promise<Document> {
  assertNoDoctype(xml);
  const { DOMParser } = await import('@xmldom/xmldom');
  try {
    const doc = new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') throw new Error(message);
      },
    }).parseFromString(xml, 'text/xml');
    return doc as unknown as Document;
  } catch (err) {
    throw new InvalidMetadata(`The metadata is not well-formed XML: ${(err as Error).message.split('\n')[0].slice(0, 200)}`);
  }
}

const children = (parent: Element, ns: string, name: string): Element[] => Array.from(parent.getElementsByTagNameNS(ns, name) as unknown as ArrayLike<Element>);

function httpUrl(raw: string | null): string | undefined {
  if (!raw) return undefined;
  try {
    const url = new URL(raw.trim());
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** The certificate's expiry; InvalidMetadata when the text is no X.509 certificate. */
export function certificateExpiry(base64: string): Date {
  try {
    return new Date(new X509Certificate(Buffer.from(base64, 'base64')).validTo);
  } catch {
    throw new InvalidMetadata('A signing certificate in the metadata is not a valid X.509 certificate');
  }
}

/** Reads the IdP's entity id, HTTP-Redirect sign-on URL and signing certificates. */
export async function parseIdpMetadata(xml: string): Promise<IdpMetadata> {
  const doc = await parseStrict(xml);
  const root = doc.documentElement as unknown as Element | null;
  if (!root) throw new InvalidMetadata('The metadata is empty');
  const entities = root.localName === 'EntityDescriptor' && root.namespaceURI === MD ? [root] : children(root, MD, 'EntityDescriptor');
  const entity = entities.find((e) => children(e, MD, 'IDPSSODescriptor').length > 0);
  if (!entity) throw new InvalidMetadata("No EntityDescriptor with an IDPSSODescriptor: is this the identity provider's SAML metadata?");
  const entityId = entity.getAttribute('entityID')?.trim();
  if (!entityId || entityId.length > 1024) throw new InvalidMetadata('The EntityDescriptor has no entityID');
  const idp = children(entity, MD, 'IDPSSODescriptor')[0];
  const sso = children(idp, MD, 'SingleSignOnService').find((s) => s.getAttribute('Binding') === REDIRECT);
  const ssoUrl = sso && httpUrl(sso.getAttribute('Location'));
  if (!ssoUrl) throw new InvalidMetadata('No SingleSignOnService with the HTTP-Redirect binding and an http(s) Location');
  const certificates = children(idp, MD, 'KeyDescriptor')
    .filter((k) => {
      const use = k.getAttribute('use');
      return !use || use === 'signing';
    })
    .flatMap((k) => children(k, DS, 'X509Certificate'))
    .map((c) => (c.textContent ?? '').replace(/\s+/g, ''))
    .filter((c) => c.length > 0);
  const unique = [...new Set(certificates)];
  if (unique.length === 0) throw new InvalidMetadata('No signing certificate (KeyDescriptor with an X509Certificate) in the IDPSSODescriptor');
  if (unique.length > 5) throw new InvalidMetadata('More than 5 signing certificates');
  const expiries = unique.map(certificateExpiry);
  return { entityId, ssoUrl, certificates: unique, certificateExpiresAt: new Date(Math.max(...expiries.map((d) => d.getTime()))) };
}

/** A base64 DER certificate as PEM, as node-saml takes it. */
export function toPem(base64: string): string {
  return `-----BEGIN CERTIFICATE-----\n${base64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
}
