/** The log-in page's "Sign in with SSO" (in the first load: the SSO page itself is fetched when opened). */
import { useApp } from '../ui/app.js';
import { Submit } from '../ui/button.js';
import { Field, Form } from '../ui/field.js';
import { SSO_SIGN_IN_FORM } from './sign-in-events.js';
import { t } from '../i18n/words.js';

/** The email picks the organization's identity provider. */
export function SsoSignIn() {
  const { dispatch } = useApp();
  return (
    <details id="sso-sign-in-details" class="text-sm">
      <summary class="cursor-pointer">{t('Sign in with SSO')}</summary>
      <div class="mt-3">
        <Form id={SSO_SIGN_IN_FORM} onSubmit={(f) => dispatch(['sso/start', f])}>
          <Field form={SSO_SIGN_IN_FORM} name="email" label={t('Work email')} type="email" required autoComplete="username" />
          <Submit>{t('Continue with SSO')}</Submit>
        </Form>
      </div>
    </details>
  );
}
