/**
 * The product's name and pitch (PRODUCT_NAME, PRODUCT_PITCH): the landing page, the pricing page
 * and the app's header show them (written into the served page), authenticator apps and passkey
 * prompts name the product with them.
 */
import { mailModule } from '../mail/module.js';
import { defineModule } from '../runtime/module.js';
import { ConfigError } from '../runtime/settings.js';

/** Without PRODUCT_PITCH: the page shows this in the reader's language (the site's catalogs). */
export const DEFAULT_PRODUCT_PITCH = 'Accounts, teams, API keys, an audit log and billing: everything a SaaS needs on its first day, accessible to everyone.';

export interface ProductServices {
  /** PRODUCT_NAME, else the display name of MAIL_FROM, else "SaaS" */
  name: string;
  pitch: string;
}

export const productModule = defineModule<ProductServices, { name: string | undefined; pitch: string | undefined }>({
  name: 'product',
  settings(env) {
    const name = env.PRODUCT_NAME?.trim() || undefined;
    if (name !== undefined && name.length > 60) throw new ConfigError('PRODUCT_NAME', `must be at most 60 characters, got ${name.length}`);
    const pitch = env.PRODUCT_PITCH?.trim() || undefined;
    if (pitch !== undefined && pitch.length > 300) throw new ConfigError('PRODUCT_PITCH', `must be at most 300 characters, got ${pitch.length}`);
    return { name, pitch };
  },
  start(ctx, settings) {
    const name = settings.name ?? ctx.use(mailModule).productName;
    return {
      services: { name, pitch: settings.pitch ?? DEFAULT_PRODUCT_PITCH },
      // src/client/shell/state.ts reads them; an empty pitch is the default, which the page translates
      // (an operator's own PRODUCT_PITCH is shown as written)
      pageFields: { '__product-name': name, '__product-pitch': settings.pitch ?? '' },
    };
  },
});
