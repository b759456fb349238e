/**
 * The sample items feature's messages in the other locales (docs/i18n.md): English id →
 * translation. The generator writes each English text as it is; `npm run i18n:status` lists what
 * is left to translate.
 */
import type { Catalogs } from '../../i18n/messages.js';
import ar from './ar.json' with { type: 'json' };
import de from './de.json' with { type: 'json' };
import es from './es.json' with { type: 'json' };

export const SAMPLE_ITEMS_MESSAGES: Catalogs = { de, es, ar };
