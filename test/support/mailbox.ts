/** Reading emailed links in tests: the newest message of a kind to an address, its link and token. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MailKind } from '../../src/mail/index.js';
import type { System } from '../../src/system.js';

export interface MailedLink {
  url: URL;
  token: string;
  subject: string;
}

/**
 * The link with a `token` of the newest `kind` message to `to`, from its text part. Waits up to
 * `waitMs` for it (forgot-password queues its message after answering).
 */
export async function mailedLink(system: System, to: string, kind: MailKind, waitMs = 3000): Promise<MailedLink> {
  const started = Date.now();
  for (;;) {
    const [message] = await system.mail.mailbox.list({ to, kind, limit: 1 });
    if (message) {
      const href = /https?:\/\/\S+\?token=\S+/.exec(message.text ?? '')?.[0];
      assert.ok(href, `the ${kind} message has a link with a token`);
      const url = new URL(href);
      return { url, token: url.searchParams.get('token')!, subject: message.subject };
    }
    assert.ok(Date.now() - started < waitMs, `no ${kind} message to ${to} within ${waitMs} ms`);
    await sleep(20);
  }
}

/** How many messages of `kind` went to `to`. */
export async function mailCount(system: System, to: string, kind?: MailKind): Promise<number> {
  return (await system.mail.mailbox.list({ to, kind, limit: 500 })).length;
}
