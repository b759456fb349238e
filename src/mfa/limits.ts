/**
 * Limits on second-factor guesses: wrong codes per account and per client address (failures
 * only, like log-in: a point is taken before the code is checked and given back when it was
 * right). Per account, because a password-holding attacker can mint as many mfa-tokens as they
 * like (a right password is never counted); each mfa-token also dies after a few wrong codes.
 * With the defaults (10 per 15 minutes), guessing one of the three codes a ±1-step window
 * accepts succeeds with odds of about 1 in 33,000 per 15 minutes. The counters live where the
 * log-in limits' do (src/auth/rate-limit.ts).
 */
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitSetting } from '../config.js';
import { addressKey, counter, takeFailurePoints, type LimiterStore, type LoginAttempt } from '../auth/rate-limit.js';

export interface SecondFactorLimits {
  /** MFA_LIMIT_ACCOUNT */
  account: RateLimitSetting | null;
  /** MFA_LIMIT_ADDRESS */
  address: RateLimitSetting | null;
}

export class SecondFactorRateLimiter {
  private readonly byAccount: RateLimiterAbstract | null;
  private readonly byAddress: RateLimiterAbstract | null;

  constructor(limits: SecondFactorLimits, store: LimiterStore = 'memory') {
    this.byAccount = counter('mfa-failures-account', limits.account, store);
    this.byAddress = counter('mfa-failures-address', limits.address, store);
  }

  /**
   * Starts a code check: 429 (Retry-After) when the account or the address has used up its
   * failures. It counts as a failure unless `refund` is called. No account yet (an unknown
   * mfa-token): the address alone.
   */
  async begin(accountId: string | undefined, address: string): Promise<LoginAttempt> {
    return takeFailurePoints([
      [this.byAddress, addressKey(address)],
      [this.byAccount, accountId],
    ]);
  }
}
