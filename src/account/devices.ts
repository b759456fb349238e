/**
 * The browsers an account signs in from (docs/sign-in.md, "Security notices"): a
 * long-lived, signed, HttpOnly `device` cookie holds a random id per browser, and
 * `account_device` the ids each account has signed in from. A complete sign-in (any first
 * factor, and the second where asked) from an id the account has not used before is told by
 * email, in the transaction that starts the session; an account's very first sign-in is not.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { originOf, type ClientOrigin } from '../audit/log.js';
import type { DatabaseSchema } from '../db/schema.js';
import type { SecurityNotices } from './notices.js';

export const DEVICE_COOKIE = 'device';
/** 400 days: the longest a browser keeps a cookie */
const DEVICE_COOKIE_SECONDS = 400 * 24 * 3600;
const DEVICE_ID = /^[A-Za-z0-9_-]{22,64}$/;

/** Where a sign-in came from: the audit's origin, the limits' address, and the browser's device id (when it has a valid one). */
export type SignInClient = ClientOrigin & { device?: string };

/** The request's origin with its device id, read from the signed cookie (a tampered or malformed one is ignored). */
export function signInClient(request: FastifyRequest): SignInClient {
  const raw = request.cookies?.[DEVICE_COOKIE];
  const unsigned = raw ? request.unsignCookie(raw) : undefined;
  const device = unsigned?.valid && unsigned.value && DEVICE_ID.test(unsigned.value) ? unsigned.value : undefined;
  return { ...originOf(request), ...(device ? { device } : {}) };
}

export function newDeviceId(): string {
  return randomBytes(18).toString('base64url');
}

/** (Re)sets the device cookie, so a browser in use keeps it. */
export function setDeviceCookie(reply: FastifyReply, device: string, secure: boolean): void {
  reply.setCookie(DEVICE_COOKIE, device, { path: '/api', httpOnly: true, sameSite: 'lax', secure, signed: true, maxAge: DEVICE_COOKIE_SECONDS });
}

/**
 * Records that the account signed in from `device`, in the session's transaction; a device new
 * to an account that has signed in before queues the notice.
 */
export async function noteDevice(
  trx: Kysely<DatabaseSchema>,
  notices: SecurityNotices | undefined,
  accountId: string,
  device: string,
  client: ClientOrigin,
): Promise<void> {
  const seen = await trx
    .updateTable('account_device')
    .set({ last_seen_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('device_id', '=', device)
    .returning('device_id')
    .executeTakeFirst();
  if (seen) return;
  // a browser unused for longer than its cookie lives is forgotten (it would be new again anyway)
  await trx
    .deleteFrom('account_device')
    .where('account_id', '=', accountId)
    .where('last_seen_at', '<', sql<Date>`now() - make_interval(secs => ${DEVICE_COOKIE_SECONDS})`)
    .execute();
  const before = await trx.selectFrom('account_device').select('device_id').where('account_id', '=', accountId).limit(1).executeTakeFirst();
  await trx
    .insertInto('account_device')
    .values({ account_id: accountId, device_id: device })
    .onConflict((oc) => oc.doNothing())
    .execute();
  if (before) await notices?.(trx, accountId, 'new-browser-sign-in', client);
}
