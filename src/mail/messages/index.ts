/** The mail feature's messages in the other locales (docs/i18n.md): English id → translation. */
import type { Catalogs } from '../../i18n/messages.js';
import ar from './ar.json' with { type: 'json' };
import de from './de.json' with { type: 'json' };
import es from './es.json' with { type: 'json' };

export const MAIL_MESSAGES: Catalogs = { de, es, ar };
