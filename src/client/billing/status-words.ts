/** A subscription's status in the reader's words (the billing page, the operator's console). */
import { msg, t } from '../i18n/words.js';

const STATUS_TEXT: Readonly<Record<string, string>> = {
  none: msg('No subscription'),
  trialing: msg('Trial'),
  active: msg('Active'),
  'past-due': msg('Payment due'),
  canceled: msg('Canceled'),
};

/** The status's words; one this client does not know, as the server names it. */
export function subscriptionStatusText(status: string): string {
  const id = STATUS_TEXT[status];
  return id ? t(id) : status;
}
