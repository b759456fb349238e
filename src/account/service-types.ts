/**
 * What the account service (service.ts) is built from and what its sign-ins answer: its
 * dependencies, the second factor other modules plug in, a session or a pending second step,
 * and the refusals other modules tell apart.
 */
import type { AccessTokens } from '../auth/access-tokens.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { LoginRateLimiter, SignUpRateLimiter } from '../auth/rate-limit.js';
import type { RefreshTokens } from '../auth/refresh-tokens.js';
import type { DB } from '../db/database.js';
import { HttpError } from '../http/errors.js';
import type { Logger } from '../logging/logger.js';
import type { Mail } from '../mail/index.js';
import type { LogInOutcome } from '../observability/events.js';
import type { BreachedPasswords } from './breached-passwords.js';
import type { SecurityNotices } from './notices.js';
import type { AccountShaping } from './account-shaping.js';
import type { LogInResponse, MfaRequired } from './schemas.js';

export interface AccountDeps {
  db: DB;
  passwords: PasswordHasher;
  accessTokens: AccessTokens;
  refreshTokens: RefreshTokens;
  loginLimiter: LoginRateLimiter;
  signUpLimiter: SignUpRateLimiter;
  mail: Pick<Mail, 'enqueue'>;
  log: Logger;
  /** told how each log-in ended (metrics, src/observability/) */
  onLogIn?: (outcome: LogInOutcome) => void;
  /** asks an account with two-factor on for its code (src/mfa/) */
  secondFactor?: SecondFactor;
  /** who is a platform admin (`platform-admin`; src/admin/ plugs in the rule); default: nobody */
  shaping?: AccountShaping;
  /** refuses a new password found in known breaches (breached-passwords.ts) */
  breaches?: Pick<BreachedPasswords, 'check'>;
  /** queues a security notice (a sign-in from a new browser) in the session's transaction */
  notices?: SecurityNotices;
}

/** What log-in hands a password-verified account with two-factor on to (src/mfa/). */
export interface SecondFactor {
  /** starts the second step: the `mfa-required` body, with the `mfa-token` that completes it */
  challenge(accountId: string): Promise<MfaRequired>;
}

/**
 * A sign-in that does not ask for the second factor itself (an organization's single sign-on,
 * src/sso/, through {@link AccountService.startSession}) reached an account with two-factor on.
 */
export class SecondFactorRequiredError extends Error {
  constructor() {
    super('This account uses two-factor authentication');
  }
}

/** A policy's refusal (403 with the policy's `type`, e.g. `sso-required`): sign-in pages tell it apart from a failure. */
export class FirstFactorRefusedError extends HttpError {
  constructor(type: string, message: string) {
    super(403, { type, message });
  }
}

/** A log-in that waits for its second factor: no tokens, no cookie. */
export interface SecondFactorPending {
  mfaRequired: MfaRequired;
}

/** A log-in result with the refresh token's absolute expiry, for the cookie. */
export interface Session {
  body: LogInResponse;
  refreshExpiresAt: Date;
  /** a sign-in's browser id, for the device cookie (devices.ts); absent on a refresh */
  device?: string;
}
