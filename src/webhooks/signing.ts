/**
 * Signing per the Standard Webhooks specification: `webhook-signature` is `v1,<base64 of
 * HMAC-SHA256("<webhook-id>.<webhook-timestamp>.<body>")>` keyed with the secret's bytes (the
 * base64 after `whsec_`), one per live secret, space-separated, so a receiver that still has the
 * secret before a rotation verifies as well as one that has the new one. The `standardwebhooks`
 * packages verify it (the tests do).
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';
/** 32 random bytes: above the specification's 24-byte minimum */
const SECRET_BYTES = 32;

/** A new secret, `whsec_<base64>`. */
export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The value of `webhook-signature` for one attempt. */
export function signatureHeader(secrets: readonly string[], messageId: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
      return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
    })
    .join(' ');
}
