/** The sign-in providers feature: provider buttons, the callback's notices, linked identities. */
import type { Feature } from '../shell/features.js';
import { AUTH_PROVIDERS_FIELD, providersInPage, registerOidc } from './events.js';

export const oidc: Feature = {
  id: 'oidc',
  register: (core, io) => registerOidc(core, io),
  // the server writes the providers into the page; without them (another server) they are asked for
  init(io) {
    const providers = providersInPage(io.pageField(AUTH_PROVIDERS_FIELD));
    return providers ? [['providers/loaded', providers]] : [];
  },
  enter: 'oidc/page-enter',
};
