/**
 * The public face: the landing page (the product's name and pitch from the server's
 * configuration, what it does, pricing, calls to action; a signed-in visitor is offered the
 * dashboard) and the page of an unknown address.
 */
import { Building2, KeyRound, ScrollText, ShieldCheck, CreditCard, Fingerprint } from 'lucide';
import type { IconNode } from 'lucide';
import { PricingPlans } from '../billing/pricing-page.js';
import { Link, useApp } from '../ui/app.js';
import { ButtonLink } from '../ui/button.js';
import { Actions } from '../ui/card.js';
import { Icon } from '../ui/icon.js';
import { PageHeader } from '../ui/page-header.js';
import { msg, t } from '../i18n/words.js';

const FEATURES: Array<{ icon: IconNode; title: string; text: string }> = [
  { icon: ShieldCheck, title: msg('Accounts done right'), text: msg('Email verification, password reset, sessions you can end, and an export of your data.') },
  { icon: Fingerprint, title: msg('Every way to sign in'), text: msg('Passwords, two-factor codes, passkeys and your identity provider.') },
  { icon: Building2, title: msg('Teams'), text: msg('Organizations with owners, admins and members, invited by email.') },
  { icon: KeyRound, title: msg('API keys'), text: msg('Keys per organization with a role, shown once and revoked at once.') },
  { icon: ScrollText, title: msg('Audit log'), text: msg('Who did what, from where and when: every security-relevant change.') },
  { icon: CreditCard, title: msg('Billing'), text: msg('Plans through Stripe Checkout, changes and invoices in the customer portal.') },
];

/** The call to action: sign up and log in, or the dashboard when signed in. */
function CallToAction({ where }: { where: string }) {
  const { state } = useApp();
  if (state.token)
    return (
      <Actions>
        <ButtonLink to="account" id={`${where}-dashboard`}>
          {t('Go to your dashboard')}
        </ButtonLink>
      </Actions>
    );
  return (
    <Actions>
      <ButtonLink to="sign-up" id={`${where}-sign-up`}>
        {t('Get started free')}
      </ButtonLink>
      <ButtonLink to="log-in" id={`${where}-log-in`} variant="secondary">
        {t('Log in')}
      </ButtonLink>
    </Actions>
  );
}

export function LandingPage() {
  const { state } = useApp();
  const name = state.product?.name ?? 'SaaS';
  return (
    <div class="mx-auto max-w-5xl space-y-16">
      <section class="space-y-6 pt-4 text-center sm:pt-10" aria-labelledby="page-title">
        <h1 id="page-title" data-page-title tabIndex={-1} class="text-4xl font-bold tracking-tight sm:text-5xl">
          {name}
        </h1>
        <p id="product-pitch" class="mx-auto max-w-2xl text-lg text-muted">
          {/* without PRODUCT_PITCH the server sends none: the default, in the reader's language */}
          {state.product?.pitch || t('Accounts, teams, API keys, an audit log and billing: everything a SaaS needs on its first day, accessible to everyone.')}
        </p>
        <div class="flex justify-center">
          <CallToAction where="hero" />
        </div>
      </section>
      <section aria-labelledby="features-title" class="space-y-6">
        <h2 id="features-title" class="text-center text-2xl font-semibold">
          {t('What you get')}
        </h2>
        <ul class="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
          {FEATURES.map((f) => (
            <li key={f.title} class="rounded-xl border border-line bg-surface p-5">
              <span class="mb-3 inline-grid size-10 place-items-center rounded-lg bg-primary-soft text-primary">
                <Icon icon={f.icon} />
              </span>
              <h3 class="font-semibold">{t(f.title)}</h3>
              <p class="mt-1 text-sm text-muted">{t(f.text)}</p>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="pricing-title" class="space-y-6">
        <div class="text-center">
          <h2 id="pricing-title" class="text-2xl font-semibold">
            {t('Pricing')}
          </h2>
          <p class="mt-1 text-sm text-muted">
            {t('Per organization.')} <Link to="pricing">{t('All about pricing')}</Link>
          </p>
        </div>
        <PricingPlans />
      </section>
      <section aria-labelledby="start-title" class="space-y-4 rounded-2xl border border-line bg-surface p-8 text-center">
        <h2 id="start-title" class="text-2xl font-semibold">
          {t('Ready when you are')}
        </h2>
        <p class="text-muted">{t('Create an account, invite your team, and pick a plan when you need one.')}</p>
        <div class="flex justify-center">
          <CallToAction where="footer" />
        </div>
      </section>
    </div>
  );
}

export function NotFoundPage() {
  const { state } = useApp();
  return (
    <div class="mx-auto max-w-md space-y-6 py-8 text-center">
      <PageHeader title={t('Page not found')} description={t('There is nothing at this address. It may have moved, or the link may be wrong.')} />
      <p id="not-found" class="text-sm text-muted">
        {t('Error 404')}
      </p>
      <div class="flex justify-center">
        <Actions>
          {state.token ? (
            <ButtonLink to="account" id="not-found-home">
              {t('Back to your dashboard')}
            </ButtonLink>
          ) : (
            <ButtonLink to="home" id="not-found-home">
              {t('Back to the home page')}
            </ButtonLink>
          )}
        </Actions>
      </div>
    </div>
  );
}
