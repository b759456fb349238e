/**
 * Server-side request forgery rules for webhook URLs (docs/webhooks.md, "Request forgery"): which
 * addresses an endpoint may reach, decided with ipaddr.js's ranges, on every address a host
 * resolves to. The sender connects to the address checked here (sender.ts pins it through the
 * request's `lookup`), so a name that resolves elsewhere the next time (DNS rebinding) cannot
 * reach what was refused.
 *
 * - link-local (169.254.0.0/16, the cloud metadata address among them; fe80::/10): always refused;
 * - loopback, private (RFC 1918), carrier-grade NAT, unique-local (fc00::/7), unspecified:
 *   refused unless WEBHOOK_ALLOW_PRIVATE=true;
 * - every other special range (multicast, broadcast, reserved, documentation, 6to4, Teredo,
 *   NAT64, IPv4-compatible `::/96` but `::` and `::1`, ...): refused always; only global unicast
 *   addresses are reached by default. An IPv4-mapped IPv6 address (`::ffff:0:0/96`) is judged as
 *   the IPv4 address it carries.
 */
import { lookup } from 'node:dns/promises';
import { Resolver } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export type AddressRefusal = 'link-local' | 'private' | 'not-routable';

const PRIVATE_RANGES: ReadonlySet<string> = new Set(['loopback', 'private', 'carrierGradeNat', 'uniqueLocal', 'unspecified']);

/**
 * IPv4-compatible IPv6 (`::/96`, deprecated by RFC 4291): ipaddr.js has no range for it (`::7f00:1`
 * is `unicast` to it) and reads the dotted `::a.b.c.d` as IPv4-mapped, so node's parser decides.
 */
const IPV4_COMPATIBLE = new BlockList();
IPV4_COMPATIBLE.addSubnet('::', 96, 'ipv6');

/** Why `address` may not be reached, or null when it may. */
export function refusalOf(address: string, allowPrivate: boolean): AddressRefusal | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return 'not-routable';
  }
  if (parsed.kind() === 'ipv6') {
    const ownRange = parsed.range();
    // `::` and `::1` are in ::/96 too: they stay unspecified and loopback
    if (ownRange !== 'unspecified' && ownRange !== 'loopback' && isIP(address) === 6 && IPV4_COMPATIBLE.check(address, 'ipv6')) return 'not-routable';
    if ((parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  if (range === 'unicast') return null;
  if (range === 'linkLocal') return 'link-local';
  if (PRIVATE_RANGES.has(range)) return allowPrivate ? null : 'private';
  return 'not-routable';
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Finds the addresses of a host name; throws a `HostNotFound` when there are none. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export class HostNotFound extends Error {
  constructor(readonly hostname: string) {
    super(`${hostname} does not resolve`);
    this.name = 'HostNotFound';
  }
}

export class AddressNotAllowed extends Error {
  constructor(readonly refusal: AddressRefusal) {
    super(`the address is ${refusal === 'not-routable' ? 'not a public unicast address' : `${refusal}`}`);
    this.name = 'AddressNotAllowed';
  }
}

const familyOf = (address: string): 4 | 6 => (isIP(address) === 6 ? 6 : 4);

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), as the rest of the process resolves names. */
export const systemResolver: HostResolver = async (hostname) => {
  try {
    const found = await lookup(hostname, { all: true, verbatim: true });
    if (found.length === 0) throw new HostNotFound(hostname);
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  } catch (err) {
    if (err instanceof HostNotFound) throw err;
    const code = (err as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'EAI_NONAME' || code === 'EAI_AGAIN') throw new HostNotFound(hostname);
    throw err;
  }
};

/** DNS servers of its own (`ip` or `ip:port`, WEBHOOK_DNS_SERVERS): A and AAAA records, asked together. */
export function dnsResolver(servers: readonly string[], timeoutMs = 5000): HostResolver {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  resolver.setServers([...servers]);
  const ask = (query: Promise<string[]>) =>
    query.catch((err: { code?: string }) => {
      if (err.code === 'ENODATA' || err.code === 'ENOTFOUND' || err.code === 'ESERVFAIL' || err.code === 'EREFUSED') return [] as string[];
      throw err;
    });
  return async (hostname) => {
    const [v4, v6] = await Promise.all([ask(resolver.resolve4(hostname)), ask(resolver.resolve6(hostname))]);
    const found = [...v4, ...v6].map((address) => ({ address, family: familyOf(address) }));
    if (found.length === 0) throw new HostNotFound(hostname);
    return found;
  };
}

/** A URL's host without the brackets of an IPv6 literal. */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * The addresses of `hostname` to connect to: an IP literal itself, else what `resolve` finds.
 * Every address must be allowed (else `AddressNotAllowed`): a name that resolves to a public
 * and a private address is refused, whichever one a client would pick.
 */
export async function allowedAddresses(hostname: string, resolve: HostResolver, allowPrivate: boolean): Promise<ResolvedAddress[]> {
  const addresses = isIP(hostname) ? [{ address: hostname, family: familyOf(hostname) }] : await resolve(hostname);
  for (const { address } of addresses) {
    const refusal = refusalOf(address, allowPrivate);
    if (refusal) throw new AddressNotAllowed(refusal);
  }
  return addresses;
}

/** A request's `lookup` that answers with the addresses checked before, whatever the name resolves to now (DNS rebinding). */
export function pinned(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [...addresses]);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
}
