/**
 * The banner of an impersonated session, on every page while it lasts: who is acting as whom,
 * and "Stop", which ends the session and returns the browser to the admin's own.
 */
import { useApp } from '../ui/app.js';
import { Button } from '../ui/button.js';
import { t } from '../i18n/words.js';
import { rich } from '../i18n/rich.js';

export function ImpersonationBanner() {
  const { state, dispatch } = useApp();
  const by = state.account?.['impersonated-by'];
  if (!by) return null;
  return (
    <section id="impersonation-banner" aria-label={t('Impersonation')} class="bg-warning-soft border-b border-line px-4 py-2 text-sm text-fg">
      <div class="mx-auto flex max-w-7xl flex-wrap items-center gap-x-4 gap-y-1">
        <p class="min-w-0 flex-1">
          {rich(
            'Viewing as <0/> (you are <1/>). Password, email, two-factor, passkeys, providers, deletion and API keys are out of reach; every change is recorded with your name.',
            [<strong class="break-all">{state.account?.email}</strong>, <span class="break-all">{by.email}</span>],
          )}
        </p>
        <Button id="impersonation-stop" variant="secondary" disabled={state.busy} onClick={() => dispatch(['impersonation/stop'])}>
          {t('Stop impersonating')}
        </Button>
      </div>
    </section>
  );
}
