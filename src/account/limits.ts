/**
 * Limits on the lifecycle's unauthenticated or mail-sending requests: verification resends per
 * account and per client address, forgot-password and email sign-in per email and per client address. Every
 * request counts (each one may send a message). Email sign-in's `/verify` also counts every
 * request per client address, and wrong codes per email across messages (a message's own five
 * bound one message, not the messages a day). The counters live where the log-in limits'
 * do (memory, the cluster's primary, or Redis; src/auth/rate-limit.ts).
 */
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitSetting } from '../config.js';
import { addressKey, counter, take, takeFailurePoints, type LimiterStore, type LoginAttempt } from '../auth/rate-limit.js';
import { HttpError, tooManyRequests } from '../http/errors.js';

export interface LifecycleLimits {
  /** RESEND_LIMIT_ACCOUNT */
  resendAccount: RateLimitSetting | null;
  /** RESEND_LIMIT_ADDRESS */
  resendAddress: RateLimitSetting | null;
  /** FORGOT_PASSWORD_LIMIT_EMAIL */
  forgotEmail: RateLimitSetting | null;
  /** FORGOT_PASSWORD_LIMIT_ADDRESS */
  forgotAddress: RateLimitSetting | null;
  /** EMAIL_SIGN_IN_LIMIT_EMAIL */
  emailSignInEmail: RateLimitSetting | null;
  /** EMAIL_SIGN_IN_LIMIT_ADDRESS */
  emailSignInAddress: RateLimitSetting | null;
  /** EMAIL_SIGN_IN_VERIFY_LIMIT_ADDRESS: `/verify` requests per client address */
  emailSignInVerifyAddress: RateLimitSetting | null;
  /** EMAIL_SIGN_IN_CODE_FAILURES: wrong codes per email, across messages */
  emailCodeFailures: RateLimitSetting | null;
}

/** Takes a point from each counter in order; a refusal gives back the points already taken. */
async function takeEach(pairs: Array<[RateLimiterAbstract | null, string]>): Promise<void> {
  const taken: Array<[RateLimiterAbstract, string]> = [];
  for (const [limiter, key] of pairs) {
    if (!limiter) continue;
    try {
      await take(limiter, key);
    } catch (err) {
      await Promise.all(taken.map(([l, k]) => l.reward(k)));
      throw err;
    }
    taken.push([limiter, key]);
  }
}

export class LifecycleRateLimiter {
  private readonly resendByAccount: RateLimiterAbstract | null;
  private readonly resendByAddress: RateLimiterAbstract | null;
  private readonly forgotByEmail: RateLimiterAbstract | null;
  private readonly forgotByAddress: RateLimiterAbstract | null;
  private readonly emailSignInByEmail: RateLimiterAbstract | null;
  private readonly emailSignInByAddress: RateLimiterAbstract | null;
  private readonly emailVerifyByAddress: RateLimiterAbstract | null;
  private readonly emailCodeFailuresByEmail: RateLimiterAbstract | null;

  constructor(limits: LifecycleLimits, store: LimiterStore = 'memory') {
    this.resendByAccount = counter('resend-account', limits.resendAccount, store);
    this.resendByAddress = counter('resend-address', limits.resendAddress, store);
    this.forgotByEmail = counter('forgot-password-email', limits.forgotEmail, store);
    this.forgotByAddress = counter('forgot-password-address', limits.forgotAddress, store);
    this.emailSignInByEmail = counter('email-sign-in-email', limits.emailSignInEmail, store);
    this.emailSignInByAddress = counter('email-sign-in-address', limits.emailSignInAddress, store);
    this.emailVerifyByAddress = counter('email-sign-in-verify-address', limits.emailSignInVerifyAddress, store);
    this.emailCodeFailuresByEmail = counter('email-sign-in-code-failures-email', limits.emailCodeFailures, store);
  }

  /** One verification resend; 429 with Retry-After over either limit. */
  resend(accountId: string, address: string): Promise<void> {
    return takeEach([
      [this.resendByAccount, accountId],
      [this.resendByAddress, addressKey(address)],
    ]);
  }

  /** One forgot-password request, counted the same whether the email has an account or not. */
  forgotPassword(email: string, address: string): Promise<void> {
    return takeEach([
      [this.forgotByEmail, email],
      [this.forgotByAddress, addressKey(address)],
    ]);
  }

  /** One email sign-in request, counted the same whether the email has an account or not. */
  emailSignIn(email: string, address: string): Promise<void> {
    return takeEach([
      [this.emailSignInByEmail, email],
      [this.emailSignInByAddress, addressKey(address)],
    ]);
  }

  /** One email sign-in `/verify` request, link or code; 429 with Retry-After over the client address's limit. */
  emailSignInVerify(address: string): Promise<void> {
    return takeEach([[this.emailVerifyByAddress, addressKey(address)]]);
  }

  /**
   * Starts a code check for `email`: a point is taken before the code is compared (concurrent
   * guesses cannot all pass a check made before any failed) and given back unless the code was
   * wrong. 429 once the address's wrong codes are used up; its links still work.
   */
  async emailCode(email: string): Promise<LoginAttempt> {
    try {
      return await takeFailurePoints([[this.emailCodeFailuresByEmail, email]]);
    } catch (err) {
      if (!(err instanceof HttpError) || err.status !== 429) throw err;
      throw tooManyRequests(
        Number(err.headers['retry-after']),
        'Too many wrong codes for this address: sign in with the link in the message, or try codes again later',
      );
    }
  }
}
