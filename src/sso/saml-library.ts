/**
 * node-saml and the XML stack under it (xml-crypto, xml-encryption, xml2js, @xmldom/xmldom: about
 * 20 MB resident) load at the first SAML use, not at start: most deployments never set up single
 * sign-on (docs/performance.md, "The embedded default's footprint"). Node keeps the module once
 * loaded: later calls cost a lookup.
 */
export const nodeSaml = (): Promise<typeof import('@node-saml/node-saml')> => import('@node-saml/node-saml');
