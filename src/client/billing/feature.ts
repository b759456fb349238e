/** The billing feature: an organization's billing page (plans, checkout, portal, the paid usage report). */
import type { Feature } from '../shell/features.js';
import { registerBilling } from './events.js';
import { BillingPage } from './pages.js';

export const billing: Feature = {
  id: 'billing',
  routes: [{ name: 'billing', path: '/billing', page: BillingPage, access: 'signed-in' }],
  register: (core, io) => registerBilling(core, io),
};
