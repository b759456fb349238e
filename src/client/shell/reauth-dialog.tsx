/** The re-authentication dialog, which the root shows over any page when a change needs it. */
import { useApp } from '../ui/app.js';
import { FormDialog } from '../ui/dialog.js';
import { t } from '../i18n/words.js';

/**
 * Re-authentication before a sensitive change (the server answered `reauthentication-required`):
 * the password, then the change is sent again; an account without a password signs in again.
 */
export function ReauthDialog() {
  const { state, dispatch } = useApp();
  const reauth = state.reauth;
  if (!reauth) return null;
  if (reauth.method === 'recent-sign-in') {
    return (
      <FormDialog
        id="reauth-dialog"
        title={t('Sign in again to continue')}
        submitLabel={t('Sign in again')}
        message={t('This change needs a sign-in within the last 10 minutes. Sign in again, then make the change.')}
        onSubmit={() => dispatch(['reauth/sign-in-again'])}
        onCancel={() => dispatch(['reauth/cancel'])}
      />
    );
  }
  return (
    <FormDialog
      id="reauth-dialog"
      title={t('Confirm with your password')}
      submitLabel={t('Confirm')}
      message={t('This change needs your password, so that no one else using this session can make it.')}
      onSubmit={(fields) => dispatch(['reauth/submit', fields['reauth-password'] ?? ''])}
      onCancel={() => dispatch(['reauth/cancel'])}
    >
      <label class="block text-sm font-medium" for="reauth-password">
        {t('Password')}
        <input
          id="reauth-password"
          name="reauth-password"
          type="password"
          required
          autoComplete="current-password"
          class="mt-1 block w-full rounded-lg border border-line bg-surface px-3 py-2 text-sm"
        />
      </label>
    </FormDialog>
  );
}
