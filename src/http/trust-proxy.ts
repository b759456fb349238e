/**
 * `TRUST_PROXY`: which hops in front of the app may name the client's address.
 */
import { isIP } from 'node:net';
import { ConfigError, list } from '../runtime/settings.js';

const PROXY_ADDRESS_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRUST_PROXY`: unset, `false` or `0` = the socket's address; a hop count (`1`); or the proxies'
 * addresses / CIDRs, comma-separated. `true` is refused: it trusts every `X-Forwarded-For` entry,
 * so the left-most one, which the client writes itself, would become its address.
 */
export function parseTrustProxy(raw: string | undefined): false | number | string[] {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'false' || value === '0') return false;
  if (value === 'true') {
    throw new ConfigError(
      'TRUST_PROXY',
      'must not be "true": that trusts every X-Forwarded-For entry, so any client could pick its own ' +
        'address (and escape the per-address limits). Give the number of proxies in front of the app (e.g. 1) or their addresses / CIDRs ' +
        '(e.g. 10.0.0.0/8); see docs/deployment.md',
    );
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 10) throw new ConfigError('TRUST_PROXY', `hop count must be between 0 and 10, got ${hops}`);
    return hops;
  }
  const entries = list(value);
  for (const entry of entries) {
    if (PROXY_ADDRESS_NAMES.has(entry)) continue;
    const [address, prefix, ...rest] = entry.split('/');
    const version = isIP(address);
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 6 ? 128 : 32));
    if (version === 0 || !prefixOk || rest.length > 0) {
      throw new ConfigError('TRUST_PROXY', `must be false, a hop count (e.g. 1) or comma-separated proxy addresses / CIDRs (e.g. 10.0.0.0/8), got "${entry}"`);
    }
  }
  return entries;
}
