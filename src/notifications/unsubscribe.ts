/**
 * One-click unsubscribe tokens (RFC 8058; docs/notifications.md, "Email"): a signed payload
 * (src/runtime/signed-payloads.ts) naming the account and the category, valid 60 days. A POST with
 * one, without a session, turns that category's email off for that account.
 */
import { SignedPayloads } from '../runtime/signed-payloads.js';

const LIFETIME_S = 60 * 86_400;

export interface Unsubscription {
  accountId: string;
  category: string;
}

export class UnsubscribeTokens {
  private readonly payloads: SignedPayloads<{ a: string; c: string; exp: number }>;

  constructor(secret: string) {
    this.payloads = new SignedPayloads(secret, 'unsubscribe');
  }

  sign({ accountId, category }: Unsubscription, now = Date.now()): string {
    return this.payloads.sign({ a: accountId, c: category, exp: Math.floor(now / 1000) + LIFETIME_S });
  }

  /** The account and category, when the token is this server's, whole and unexpired. */
  verify(token: string, now = Date.now()): Unsubscription | undefined {
    const payload = this.payloads.verify(token, (p) => typeof p.a === 'string' && typeof p.c === 'string', now);
    return payload && { accountId: payload.a, category: payload.c };
  }
}
