/**
 * The scopes in the consent screen's words, as message ids the client's catalogs translate:
 * the same English as src/shared/oauth-scopes.ts's SCOPE_WORDS (test/i18n/catalogs.test.ts holds
 * them equal), marked here because the catalogs are read from the client's own sources.
 */
import { msg, t } from '../i18n/words.js';

const SCOPE_IDS: Readonly<Record<string, string>> = {
  openid: msg('Know who you are (your account id)'),
  profile: msg('See your name'),
  email: msg('See your email address and whether it is verified'),
  offline_access: msg('Stay connected when you are not using it'),
  'account:read': msg('Read your account'),
  'orgs:read': msg('See your organizations and their members'),
  'orgs:write': msg('Create organizations and rename them'),
};

export const SCOPE_MESSAGE_IDS = SCOPE_IDS;

/** A scope's words in the reader's language: a declared one's (a generated resource's) as its feature marks them; an unknown one as it is. */
export function scopeWords(scope: string, declared: Readonly<Record<string, string>> | undefined): string {
  return t(SCOPE_IDS[scope] ?? declared?.[scope] ?? scope);
}
