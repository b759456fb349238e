/**
 * The built-in notification categories' names as message ids the client's catalogs translate:
 * the same English as src/notifications/kinds.ts's BUILT_IN_CATEGORIES (test/i18n/catalogs.test.ts
 * holds them equal). A category another module declares shows the name the server gives.
 */
import { msg, t } from '../i18n/words.js';

const CATEGORY_IDS: Readonly<Record<string, string>> = {
  organizations: msg('Organizations'),
  security: msg('Security'),
  billing: msg('Billing'),
  developers: msg('Developers'),
};

export const CATEGORY_MESSAGE_IDS = CATEGORY_IDS;

/** A category's name in the reader's language. */
export function categoryName(category: { category: string; name: string }): string {
  const id = CATEGORY_IDS[category.category];
  return id ? t(id) : category.name;
}
