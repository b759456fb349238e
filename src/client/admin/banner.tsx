/**
 * The banner of an impersonated session, on every page while it lasts: who is acting as whom,
 * and "Stop", which ends the session and returns the browser to the admin's own.
 */
import { useApp } from '../ui/app.js';
import { Button } from '../ui/button.js';

export function ImpersonationBanner() {
  const { state, dispatch } = useApp();
  const by = state.account?.['impersonated-by'];
  if (!by) return null;
  return (
    <section id="impersonation-banner" aria-label="Impersonation" class="bg-warning-soft border-b border-line px-4 py-2 text-sm text-fg">
      <div class="mx-auto flex max-w-7xl flex-wrap items-center gap-x-4 gap-y-1">
        <p class="min-w-0 flex-1">
          Viewing as <strong class="break-all">{state.account?.email}</strong> (you are <span class="break-all">{by.email}</span>). Password, email, two-factor,
          passkeys, providers, deletion and API keys are out of reach; every change is recorded with your name.
        </p>
        <Button id="impersonation-stop" variant="secondary" disabled={state.busy} onClick={() => dispatch(['impersonation/stop'])}>
          Stop impersonating
        </Button>
      </div>
    </section>
  );
}
