/**
 * The first factor of a sign-in, as the account module sees it (docs/sign-in.md): how the person
 * proved who they are first, and the policies other modules plug in to refuse a method for an
 * account (enterprise single sign-on, for one: an organization that requires it).
 */

/** How a sign-in's first step was made. */
export type FirstFactorMethod = 'password' | 'email-link' | 'provider' | 'passkey';

/**
 * Asked at every first factor, after it succeeded and before a session or a second-factor
 * challenge is issued; throws an HttpError to refuse the sign-in.
 */
export type FirstFactorPolicy = (account: { id: string; email: string }, method: FirstFactorMethod) => Promise<void>;

/**
 * The client's second-step page: a sign-in that ends in a redirect (a provider's callback, a SAML
 * response) sends an account with two-factor on here, the mfa-token in the URL's fragment.
 */
export const TWO_FACTOR_PAGE = '/log-in/two-factor';
