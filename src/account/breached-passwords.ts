/**
 * Breached passwords (docs/security.md): a new password (at sign-up, reset and change) found in
 * Have I Been Pwned's Pwned Passwords is refused with 400 `password-breached`. The range API keeps
 * the password to this server (k-anonymity): only the first 5 hex characters of its SHA-1 leave,
 * and the answer lists every suffix with that prefix; with `Add-Padding: true` it is padded with
 * made-up suffixes of count 0 (not matches), so its size tells an observer nothing either.
 *
 * The check fails open: when the service does not answer within 2 s, or answers other than 200,
 * the password is accepted, a warning logged and a metric counted: an outage there must not stop
 * sign-ups here, and the check is a second line behind the password's length.
 */
import { createHash } from 'node:crypto';
import { HttpError } from '../http/errors.js';
import type { Logger } from '../logging/logger.js';

export interface BreachCheckSettings {
  /** PASSWORD_BREACH_CHECK: on in prod and dev, off in test */
  enabled: boolean;
  /** HIBP_API_URL: the range API's base (its `/range/<prefix>`) */
  apiUrl: string;
  /** how long the service may take, ms (2000) */
  timeoutMs?: number;
}

export type BreachCheckOutcome = 'clean' | 'breached' | 'unavailable';

/** 400 `password-breached`: the password is in known breaches, so it is among the first any attacker tries. */
export function passwordBreached(field: string): HttpError {
  return new HttpError(400, {
    type: 'password-breached',
    message: 'This password has appeared in a data breach (Have I Been Pwned), so attackers try it first: choose another one',
    errors: [{ path: `/${field}`, message: 'is a known breached password' }],
  });
}

export class BreachedPasswords {
  constructor(
    private readonly settings: BreachCheckSettings,
    private readonly log: Logger,
    /** told how each check went (metrics) */
    private readonly onCheck?: (outcome: BreachCheckOutcome) => void,
  ) {}

  /** Throws 400 `password-breached` when the password is known breached; `field`: the body field it came in. */
  async check(password: string, field = 'password'): Promise<void> {
    if (!this.settings.enabled) return;
    const outcome = await this.lookUp(password);
    this.onCheck?.(outcome);
    if (outcome === 'breached') throw passwordBreached(field);
  }

  private async lookUp(password: string): Promise<BreachCheckOutcome> {
    const sha1 = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
    const prefix = sha1.slice(0, 5);
    const suffix = sha1.slice(5);
    let body: string;
    try {
      const res = await fetch(`${this.settings.apiUrl.replace(/\/+$/, '')}/range/${prefix}`, {
        headers: { 'add-padding': 'true', 'user-agent': 'saas-starter-breach-check' },
        signal: AbortSignal.timeout(this.settings.timeoutMs ?? 2000),
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        return this.unavailable(`answered ${res.status}`);
      }
      body = await res.text();
    } catch (err) {
      return this.unavailable((err as Error).name === 'TimeoutError' ? 'did not answer in time' : `could not be reached (${(err as Error).message})`);
    }
    for (const line of body.split('\n')) {
      const [candidate, count] = line.trim().split(':');
      // padding lines carry a count of 0: not a match
      if (candidate?.toUpperCase() === suffix && Number(count) > 0) return 'breached';
    }
    return 'clean';
  }

  private unavailable(why: string): BreachCheckOutcome {
    this.log.warn('account/breach-check-unavailable', `The breached-password service ${why}; the password was accepted unchecked`, { reason: why });
    return 'unavailable';
  }
}
