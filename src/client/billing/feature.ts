/** The billing feature: an organization's billing page (plans, checkout, portal, the paid usage report) and the public pricing page. */
import { CreditCard } from 'lucide';
import { currentOrgNavPath } from '../orgs/current-org.js';
import type { Feature } from '../shell/features.js';
import { billingPath, registerBilling } from './events.js';
import { BillingPage } from './billing-page.js';
import { PricingPage } from './pricing-page.js';
import { msg } from '../i18n/words.js';

export const billing: Feature = {
  id: 'billing',
  routes: [
    { name: 'pricing', path: '/pricing', page: PricingPage, access: 'public', title: msg('Pricing') },
    { name: 'org-billing', path: '/orgs/:id/billing', page: BillingPage, access: 'signed-in', title: msg('Billing') },
    // where Stripe's checkout and portal send the browser back (`?org=<id>&checkout=…`): the page moves to the one above
    { name: 'billing', path: '/billing', page: BillingPage, access: 'signed-in', title: msg('Billing') },
  ],
  nav: [
    {
      section: 'org',
      route: 'org-billing',
      label: msg('Billing'),
      id: 'nav-org-billing',
      icon: CreditCard,
      order: 4,
      path: currentOrgNavPath(billingPath),
    },
  ],
  register: (core, io) => registerBilling(core, io),
};
