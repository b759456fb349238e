/**
 * Attempt limits for log-in and sign-up, on the counters of http/rate-limit.ts.
 *
 * Log-in counts failures only, so that no one can lock another person out: the hard limits are
 * per email + client address and per client address, never per email alone (OWASP, Authentication
 * Cheat Sheet, "Account lockout"). A point is taken before the password is checked and given back
 * when it was right: taking it first is atomic in every store, so a burst of concurrent guesses
 * cannot all pass a check made before any of them failed (docs/security.md, "Rate limits").
 */
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { addressKey, counter, take, takeFailurePoints, type LimiterStore, type LoginAttempt } from '../http/rate-limit.js';
import type { RateLimitSetting } from '../runtime/settings.js';

export { addressKey, counter, take, takeFailurePoints, type LimiterStore, type LoginAttempt } from '../http/rate-limit.js';

export interface LoginLimits {
  /** failures per email + client address (LOGIN_LIMIT_EMAIL) */
  email: RateLimitSetting | null;
  /** failures per client address, whatever the email (LOGIN_LIMIT_ADDRESS) */
  address: RateLimitSetting | null;
}

export class LoginRateLimiter {
  private readonly byEmailAndAddress: RateLimiterAbstract | null;
  private readonly byAddress: RateLimiterAbstract | null;

  constructor(limits: LoginLimits, store: LimiterStore = 'memory') {
    // prefixes name what the key is: the counters keyed by email alone are gone
    this.byEmailAndAddress = counter('login-failures-email-address', limits.email, store);
    this.byAddress = counter('login-failures-address', limits.address, store);
  }

  /**
   * Starts an attempt: throws a 429 (Retry-After) when this email from this address, or this
   * address, has used up its failures. The attempt counts as a failure unless
   * {@link LoginAttempt.refund} is called.
   */
  async begin(email: string, address: string): Promise<LoginAttempt> {
    const client = addressKey(address);
    // the address's own key first: a refusal there leaves the shared address counter untouched
    return takeFailurePoints([
      [this.byEmailAndAddress, `${client} ${email}`],
      [this.byAddress, client],
    ]);
  }
}

/** Sign-ups per client address (SIGNUP_LIMIT_ADDRESS); every attempt counts. */
export class SignUpRateLimiter {
  private readonly byAddress: RateLimiterAbstract | null;

  constructor(limit: RateLimitSetting | null, store: LimiterStore = 'memory') {
    this.byAddress = counter('signup-address', limit, store);
  }

  /** Counts one sign-up; throws a 429 with Retry-After when the address is over its limit. */
  async attempt(address: string): Promise<void> {
    if (this.byAddress) await take(this.byAddress, addressKey(address));
  }
}
