/**
 * Client ID Metadata Documents (the MCP specification's preferred registration; docs/oauth.md,
 * "Client ID Metadata Documents"): a `client_id` that is an `https` URL with a path names a JSON
 * document its client serves about itself. oidc-provider's `clientIdMetadataDocument` feature
 * resolves and caches such clients; this is what the product puts around it:
 *
 * - the document is fetched here (`allowFetch`, before the provider's own fetch, so that a refusal
 *   reaches the client as `invalid_client` with its reason, which the provider's fetch would
 *   fold into "fetch failed"): through the outgoing webhooks' address guard (every address the
 *   host resolves to must be public, unless WEBHOOK_ALLOW_PRIVATE; the connection goes to the
 *   address checked), no redirects, one 5 s budget, at most 5 KB, JSON;
 * - it must name itself as `client_id`, give `client_name` and `redirect_uris` (each as the
 *   product allows an app's, redirect-uris.ts), use `token_endpoint_auth_method: none`, and ask
 *   within the registration scopes; one that names no scope gets them all (consent bounds them);
 * - the provider then takes the document the fetch kept (its `fetch` option), and keeps the client
 *   as long as the document's `Cache-Control` says, between 5 minutes and 24 hours; a refused one
 *   is answered from memory for a minute.
 */
import { request, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { AddressNotAllowed, allowedAddresses, bareHost, HostNotFound, pinned, type HostResolver } from '../webhooks/address-guard.js';
import type { Logger } from '../logging/logger.js';
import { redirectUriProblem } from './redirect-uris.js';

type OidcErrors = typeof import('oidc-provider')['errors'];

export const METADATA_DOCUMENT_LIMIT_BYTES = 5 * 1024;
export const METADATA_DOCUMENT_TIMEOUT_MS = 5000;
/** seconds the provider keeps a fetched client: the document's Cache-Control within these */
export const METADATA_DOCUMENT_CACHE = { min: 300, max: 86_400 };

const MAX_NAME = 100;
/** control and formatting characters (bidi overrides, zero-width ones): a name shown on the consent page holds none */
export const CONTROL_CHARACTERS = /[\p{Cc}\p{Cf}]/u;
const REFUSAL_KEPT_MS = 60_000;
const MAX_REFUSED = 1000;
const MAX_REDIRECT_URIS = 10;

/** Whether a client id names a metadata document: an https URL with a path beyond `/`, no credentials, no fragment. */
export function isMetadataDocumentId(clientId: string): boolean {
  if (!/^https:\/\//i.test(clientId) || clientId.includes('#')) return false;
  const url = URL.parse(clientId);
  return url !== null && url.protocol === 'https:' && url.username === '' && url.password === '' && url.pathname !== '/';
}

/** The host a metadata-document client is named by on the consent page; null for any other client. */
export const metadataDocumentHost = (clientId: string): string | null => (isMetadataDocumentId(clientId) ? new URL(clientId).host : null);

export interface FetchSettings {
  resolve: HostResolver;
  allowPrivate: boolean;
  userAgent: string;
}

interface Fetched {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

class Refused extends Error {}

/** One GET within the budget: the status, the headers and at most `limit` bytes of the body. */
function get(url: URL, settings: FetchSettings): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Refused(`it did not answer within ${METADATA_DOCUMENT_TIMEOUT_MS / 1000} s`)), METADATA_DOCUMENT_TIMEOUT_MS);
    let req: ReturnType<typeof request> | undefined;
    let res: IncomingMessage | undefined;
    // once refused (the budget ran out, say while the name was resolving), nothing more is opened
    let settled = false;
    const fail = (err: Error) => {
      settled = true;
      clearTimeout(timer);
      res?.destroy();
      req?.destroy();
      reject(err);
    };
    allowedAddresses(bareHost(url), settings.resolve, settings.allowPrivate).then((addresses) => {
      if (settled) return;
      req = (url.protocol === 'https:' ? httpsRequest : request)(
        {
          protocol: url.protocol,
          hostname: bareHost(url),
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method: 'GET',
          headers: { accept: 'application/json', 'user-agent': settings.userAgent },
          agent: false,
          lookup: pinned(addresses),
        },
        (answer) => {
          res = answer;
          const chunks: Buffer[] = [];
          let size = 0;
          answer.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > METADATA_DOCUMENT_LIMIT_BYTES) return fail(new Refused(`it is over ${METADATA_DOCUMENT_LIMIT_BYTES / 1024} KB`));
            chunks.push(chunk);
          });
          answer.on('end', () => {
            settled = true;
            clearTimeout(timer);
            const headers = Object.fromEntries(Object.entries(answer.headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : [])));
            resolve({ status: answer.statusCode ?? 0, headers, body: Buffer.concat(chunks) });
          });
          answer.on('error', fail);
        },
      );
      req.on('error', fail);
      req.end();
    }, fail);
  });
}

/**
 * The reason a client is told: about the document (too big, too slow, not allowed), never about
 * the network (refused, not TLS, a bad certificate, no such name), which would let anyone probe
 * which hosts and ports answer; the detail goes to the server's log.
 */
function reasonOf(err: unknown): string {
  if (err instanceof Refused) return err.message;
  if (err instanceof AddressNotAllowed) return 'its host is not on a public address';
  return 'it could not be fetched';
}

/** The network detail for the server's log. */
const detailOf = (err: unknown) =>
  err instanceof HostNotFound ? 'dns-failed' : String((err as { code?: string }).code ?? (err as Error).message ?? 'failed').slice(0, 100);

/** What the document must say, or why it does not fit. */
function problemOf(document: unknown, clientId: string, allowedScopes: readonly string[]): string | undefined {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) return 'it is not a JSON object';
  const d = document as Record<string, unknown>;
  if (d.client_id !== clientId) return 'its client_id is not its own URL';
  if (typeof d.client_name !== 'string' || d.client_name.trim() === '' || [...d.client_name].length > MAX_NAME)
    return `its client_name must be 1 to ${MAX_NAME} characters`;
  if (CONTROL_CHARACTERS.test(d.client_name)) return 'its client_name must not hold control or formatting characters (a bidi override, a zero-width character)';
  if (d.token_endpoint_auth_method !== 'none') return 'its token_endpoint_auth_method must be none';
  if ('client_secret' in d) return 'it must not hold a client_secret';
  const uris = d.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS) return `it must list 1 to ${MAX_REDIRECT_URIS} redirect_uris`;
  for (const uri of uris) {
    const problem = typeof uri === 'string' ? redirectUriProblem(uri) : 'must be a string';
    if (problem) return `redirect_uris: ${problem}`;
  }
  if (d.scope !== undefined) {
    if (typeof d.scope !== 'string') return 'its scope must be a string';
    const beyond = d.scope.split(' ').filter((s) => s && !allowedScopes.includes(s));
    if (beyond.length > 0) return `its scope may hold at most ${allowedScopes.join(' ')}; not ${beyond.join(' ')}`;
  }
  return undefined;
}

/**
 * The provider's hooks for metadata documents: `allowFetch` fetches and checks one (throwing
 * `invalid_client` with the reason), `fetch` hands the provider what was fetched.
 */
export class MetadataDocuments {
  /** documents fetched and checked, until the provider takes them (a moment later) */
  private readonly kept = new Map<string, Fetched>();
  /**
   * documents refused lately, with the reason: the provider looks a client up more than once per
   * request, and a client id that cannot be used costs a fetch (up to 5 s) only once a minute
   */
  private readonly refused = new Map<string, { reason: string; until: number }>();

  constructor(
    private readonly settings: FetchSettings,
    private readonly allowedScopes: () => readonly string[],
    private readonly log?: Logger,
  ) {}

  async allowFetch(clientId: string, errors: OidcErrors): Promise<true> {
    const refusal = (reason: string) => new errors.InvalidClient(`the client_id metadata document cannot be used: ${reason}`);
    // oidc-provider takes a host's root too; a document names its path, and its host is shown
    if (!isMetadataDocumentId(clientId)) throw refusal('its URL must be https with a path, no credentials and no fragment');
    const known = this.refused.get(clientId);
    if (known && known.until > Date.now()) throw refusal(known.reason);
    const refuse = (reason: string) => {
      if (this.refused.size >= MAX_REFUSED) this.refused.delete(this.refused.keys().next().value!);
      this.refused.set(clientId, { reason, until: Date.now() + REFUSAL_KEPT_MS });
      return refusal(reason);
    };
    let fetched: Fetched;
    try {
      fetched = await get(new URL(clientId), this.settings);
    } catch (err) {
      this.log?.info('oauth/metadata-document-unreachable', 'A client_id metadata document could not be fetched', {
        host: new URL(clientId).host,
        detail: detailOf(err),
      });
      throw refuse(reasonOf(err));
    }
    if (fetched.status >= 300 && fetched.status < 400) throw refuse('it redirects, and redirects are not followed');
    if (fetched.status !== 200) throw refuse(`it answered ${fetched.status}`);
    let document: unknown;
    try {
      document = JSON.parse(fetched.body.toString('utf8'));
    } catch {
      throw refuse('it is not JSON');
    }
    const problem = problemOf(document, clientId, this.allowedScopes());
    if (problem) throw refuse(problem);
    this.refused.delete(clientId);
    const d = document as Record<string, unknown>;
    // naming no scope, it may ask every scope a registered client may (consent bounds what it gets)
    const body = d.scope === undefined ? Buffer.from(JSON.stringify({ ...d, scope: this.allowedScopes().join(' ') })) : fetched.body;
    const kept = { ...fetched, body };
    this.kept.set(clientId, kept);
    // the provider fetches right after this answers; what it does not take goes
    setTimeout(() => this.kept.get(clientId) === kept && this.kept.delete(clientId), 30_000).unref();
    return true;
  }

  /** The provider's `fetch`: the document `allowFetch` kept, as a WHATWG Response. */
  async fetch(url: string | URL): Promise<Response> {
    const key = String(url);
    const fetched = this.kept.get(key);
    this.kept.delete(key);
    // the provider fetches nothing else (no app registers a jwks_uri or sector_identifier_uri it could reach)
    if (!fetched) throw new Error('the provider fetches only client_id metadata documents, once checked');
    const headers = new Headers({ 'content-type': 'application/json' });
    for (const name of ['cache-control', 'expires']) if (fetched.headers[name]) headers.set(name, fetched.headers[name]);
    return new Response(new Uint8Array(fetched.body), { status: 200, headers });
  }
}

/** A loopback redirect URI without its port (RFC 8252 §7.3: a native client's port varies), or undefined for any other. */
export function loopbackWithoutPort(uri: string): string | undefined {
  // the raw string with only `:port` cut out: everything else must match exactly (no URL normalising)
  const m = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::\d{1,5})?([/?#][^\s\\]*)?$/.exec(uri);
  return m ? `http://${m[1]}${m[2] ?? ''}` : undefined;
}
