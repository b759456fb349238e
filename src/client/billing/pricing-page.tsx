/**
 * The public pricing page (`/pricing`), and its plans, which the landing page shows too: a call
 * to sign up, or to the organization's billing.
 */
import { useEffect } from 'preact/hooks';
import { useApp } from '../ui/app.js';
import { ButtonLink } from '../ui/button.js';
import { PageHeader } from '../ui/page-header.js';
import { billingPath } from './events.js';
import { PlanCards } from './plan-cards.js';
import { planName } from './prices.js';
import { t } from '../i18n/words.js';

/** The plans on offer, for the pricing page and the landing page: a call to sign up, or to the organization's billing. */
export function PricingPlans() {
  const { state, dispatch } = useApp();
  useEffect(() => {
    dispatch(['pricing/load']);
  }, []);
  const pricing = state.pricing;
  if (!pricing || pricing.status === 'loading')
    return (
      <p class="text-sm text-muted" role="status">
        {t('Loading plans…')}
      </p>
    );
  if (pricing.status === 'failed' || !pricing.plans) return <p class="text-sm text-muted">{t('The plans could not be loaded.')}</p>;
  if (pricing.plans.length === 0) return <p class="text-sm text-muted">{t('No plans are on offer yet.')}</p>;
  const org = state.currentOrg;
  return (
    <PlanCards
      plans={pricing.plans}
      trialDays={pricing.trialDays}
      meters={pricing.meters}
      action={(p) =>
        state.token && org ? (
          <ButtonLink to="org-billing" path={billingPath(org)} class="w-full">
            {t('Choose')} {planName(p)}
          </ButtonLink>
        ) : (
          <ButtonLink to="sign-up" class="w-full">
            {t('Start with {plan}', { plan: planName(p) })}
          </ButtonLink>
        )
      }
    />
  );
}

export function PricingPage() {
  return (
    <div class="mx-auto max-w-5xl space-y-8">
      <PageHeader title={t('Pricing')} description={t('One price per organization. Change or cancel at any time from the billing page.')} />
      <PricingPlans />
    </div>
  );
}
