/**
 * The mail module's settings (docs/email.md): MAIL_URL, MAIL_FROM and the delivery worker's pace.
 */
import { ConfigError, int, str, type Env } from '../runtime/settings.js';

export interface MailSettings {
  /** `smtp://` or `smtps://` URL; undefined: the local mailbox (dev and test only) */
  url: string | undefined;
  /** the From header, e.g. `SaaS <no-reply@localhost>` */
  from: string;
  /** how often the worker looks for due messages, ms */
  pollMs: number;
  /** first retry delay, ms; doubled per attempt up to `retryMaxMs` */
  retryBaseMs: number;
  retryMaxMs: number;
  /** a message still not delivered this long after it was queued ends `failed`, ms */
  giveUpMs: number;
  /** how long a claimed message belongs to the instance sending it, ms */
  leaseMs: number;
}

export function mailSettings(env: Env, prod: boolean): MailSettings {
  const url = env.MAIL_URL?.trim() || undefined;
  if (url) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') || !parsed.hostname) {
      throw new ConfigError('MAIL_URL', 'must be smtp://user:pass@host:port or smtps://user:pass@host:port');
    }
  } else if (prod) {
    throw new ConfigError('MAIL_URL', 'is required when APP_ENV=prod (smtp://user:pass@host:port or smtps://...)');
  }
  const from = str(env, 'MAIL_FROM', 'SaaS <no-reply@localhost>').trim();
  if (!/^([^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(from)) {
    throw new ConfigError('MAIL_FROM', `must be an address or "Name <address>", got "${from}"`);
  }
  const retryBaseMs = int(env, 'MAIL_RETRY_BASE_MS', 30_000, 1);
  return {
    url,
    from,
    pollMs: int(env, 'MAIL_POLL_MS', 1000, 10, 3_600_000),
    retryBaseMs,
    retryMaxMs: Math.max(retryBaseMs, int(env, 'MAIL_RETRY_MAX_MS', 3_600_000, 1)),
    giveUpMs: int(env, 'MAIL_GIVE_UP_MS', 86_400_000, 1),
    leaseMs: int(env, 'MAIL_LEASE_MS', 300_000, 100),
  };
}
