/**
 * The provider's browser session never outlives the product session that made it (docs/oauth.md,
 * "Sessions"). oidc-provider keeps a session of its own (its cookie, 30 days), which would let a
 * browser authorize any app with no sign-in long after the product's log-out. So:
 *
 * - binding: an Allow on the consent page names the caller's product session (refresh family) in
 *   the interaction's result; when the provider saves the `Session` of that sign-in, the adapter
 *   stores it beside (`oauth_model.session_id`);
 * - ending: ending a product session (log-out, ending it from another device, a password change,
 *   locking, deletion) deletes the provider sessions bound to it, in the same statement
 *   (src/auth/session-revocation.ts), and log-out clears the provider's cookies;
 * - checking: the login prompt gains a check that asks for a sign-in (the consent page) whenever
 *   the provider's session has no live product session behind it, so one made before this rule,
 *   or whose product session expired, counts as signed out.
 */
import { sql } from 'kysely';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { DB } from '../db/database.js';

type OidcProvider = typeof import('oidc-provider');

/** The key of the interaction result naming the product session of the sign-in. */
export const SIGNED_IN_SESSION = 'saas-session';

/** The product session the provider is saving a `Session` for: the resumed interaction's result names it. */
export function signingInSession(ctx: KoaContextWithOIDC | undefined): string | undefined {
  const named = (ctx?.oidc?.result as Record<string, unknown> | undefined)?.[SIGNED_IN_SESSION];
  return typeof named === 'string' ? named : undefined;
}

/** Whether the provider session `jti` is bound to a product session that is still live. */
async function boundToLiveSession(db: DB, jti: string): Promise<boolean> {
  const row = await db
    .selectFrom('oauth_model as m')
    .innerJoin('refresh_family as f', 'f.id', 'm.session_id')
    .select('f.id')
    .where('m.model', '=', 'Session')
    .where('m.id', '=', jti)
    .where('f.revoked_at', 'is', null)
    .where('f.expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  return row !== undefined;
}

/** The default interaction policy with the login prompt's extra check: a live product session behind the provider's. */
export function interactionPolicy(db: DB, oidc: OidcProvider) {
  const { base, Check } = oidc.interactionPolicy;
  const policy = base();
  policy.get('login')!.checks.add(
    new Check('product_session', 'End-User authentication is required', async (ctx) => {
      const session = ctx.oidc.session;
      if (!session?.accountId || ctx.oidc.result?.login) return Check.NO_NEED_TO_PROMPT;
      // the Session model's id is its jti (what the adapter stores it under)
      return (await boundToLiveSession(db, (session as unknown as { jti: string }).jti)) ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT;
    }),
  );
  return policy;
}
