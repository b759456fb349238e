/**
 * The account lifecycle's pages: the link pages (verify-email, confirm-email, reset-password),
 * forgot password, the profile, security (password, two-factor, passkeys, sign-in methods) and
 * account deletion; the sessions page is sessions-pages.tsx's. They read the state and dispatch
 * the events of account/events.ts.
 */
import { Link, useApp } from '../ui/app.js';
import { Button, ButtonLink, Submit } from '../ui/button.js';
import { Actions, Card, Narrow, Stack } from '../ui/card.js';
import { Avatar } from '../ui/avatar.js';
import { Alert } from '../ui/feedback.js';
import { Field, Form, SelectField } from '../ui/field.js';
import { LOCALE_NAMES, LOCALES } from '../../shared/locales.js';
import { FileUpload, IMAGE_TYPES } from '../ui/file-upload.js';
import { PageHeader } from '../ui/page-header.js';
import { SignInMethods } from '../oidc/pages.js';
import type { TokenRoute } from './events.js';
import { PasskeysSection, TwoFactorSection } from './security-pages.js';
import { t } from '../i18n/words.js';
import { rich } from '../i18n/rich.js';

/** What a link page shows while its token is checked, and after. */
function TokenOutcome({ route, done }: { route: TokenRoute; done: string }) {
  const { state } = useApp();
  const page = state.tokenPage?.route === route ? state.tokenPage : undefined;
  const status = page?.status ?? 'checking';
  return (
    <>
      <Alert id="token-status" data-status={status} tone={status === 'failed' ? 'error' : status === 'done' ? 'success' : 'info'}>
        {status === 'checking' ? t('Checking the link…') : status === 'done' ? done : page?.message}
      </Alert>
      <p class="text-sm">{state.token ? <Link to="account">{t('Go to your account')}</Link> : <Link to="log-in">{t('Log in')}</Link>}</p>
    </>
  );
}

export function VerifyEmailPage() {
  return (
    <Narrow>
      <PageHeader title={t('Verify your email')} />
      <TokenOutcome route="verify-email" done={t('Your email address is verified.')} />
    </Narrow>
  );
}

export function ConfirmEmailPage() {
  return (
    <Narrow>
      <PageHeader title={t('Confirm your new email')} />
      <TokenOutcome route="confirm-email" done={t('Your new email address is confirmed; use it to log in from now on.')} />
    </Narrow>
  );
}

export function ForgotPasswordPage() {
  const { state, dispatch } = useApp();
  return (
    <Narrow>
      <PageHeader title={t('Forgot password')} description={t("Enter your account's email and we'll send you a link to set a new password.")} />
      {state.forgotSent ? (
        <Alert id="forgot-password-sent" tone="success">
          {t('If an account exists for that address, a link to reset its password is on its way. It works for one hour.')}
        </Alert>
      ) : (
        <Card>
          <Form id="forgot-password" onSubmit={(f) => dispatch(['forgot-password/submit', f])}>
            <Field form="forgot-password" name="email" label={t('Email')} type="email" required autoComplete="username" />
            <Submit>{t('Send reset link')}</Submit>
          </Form>
        </Card>
      )}
      <p class="text-sm">
        <Link to="log-in">{t('Back to log in')}</Link>
      </p>
    </Narrow>
  );
}

export function ResetPasswordPage() {
  const { state, dispatch } = useApp();
  return (
    <Narrow>
      <PageHeader title={t('Set a new password')} />
      {state.resetToken ? (
        <Card>
          <Form id="reset-password" onSubmit={(f) => dispatch(['reset-password/submit', f])}>
            <Field
              form="reset-password"
              name="password"
              label={t('New password (8+ characters)')}
              type="password"
              required
              minLength={8}
              maxLength={128}
              autoComplete="new-password"
            />
            <Field form="reset-password" name="confirm-password" label={t('Confirm new password')} type="password" required autoComplete="new-password" />
            <Submit>{t('Set new password')}</Submit>
          </Form>
        </Card>
      ) : (
        <Alert id="reset-password-missing" tone="error">
          {rich('This link has no token. Open the link from the email again, or <0>ask for a new one</0>.', [
            (text) => <Link to="forgot-password">{text}</Link>,
          ])}
        </Alert>
      )}
    </Narrow>
  );
}

/** The profile's picture: the current one (or the initials), a new one uploaded at once, removal. */
function PictureCard() {
  const { state, dispatch } = useApp();
  const a = state.account!;
  const going = ['starting', 'sending', 'completing'].includes(state.uploads?.['avatar-upload']?.phase ?? '');
  return (
    <Card title={t('Picture')} id="avatar-card" titleId="avatar-title" description={t('Shown in the header and to the members of your organizations.')}>
      <div class="flex flex-wrap items-start gap-4">
        <Avatar
          id="avatar-current"
          image={a.avatar}
          name={a.name || a.email}
          size="lg"
          alt={a.avatar ? t('Your picture') : t('No picture yet: your initials')}
        />
        <div class="min-w-0 flex-1 space-y-3">
          <FileUpload
            id="avatar-upload"
            label={a.avatar ? t('Upload a new picture') : t('Upload a picture')}
            accept={IMAGE_TYPES}
            hint={t('PNG, JPEG or WebP. It is cropped to a square.')}
            request={{ purpose: 'avatar', onDone: ['account/load'] }}
          />
          {a.avatar && (
            <Button id="remove-avatar" variant="secondary" disabled={state.busy || going} onClick={() => dispatch(['avatar/remove'])}>
              {t('Remove picture')}
            </Button>
          )}
        </div>
      </div>
    </Card>
  );
}

/** The profile: picture, name, email, the account's data, deletion. */
export function SettingsPage() {
  const { state, dispatch } = useApp();
  const a = state.account;
  if (!a)
    return (
      <>
        <PageHeader title={t('Profile')} />
        <p class="text-sm text-muted">{t('Loading account…')}</p>
      </>
    );
  return (
    <>
      <PageHeader title={t('Profile')} description={t('Your picture, your name, your email address and your data.')} />
      <Stack>
        <PictureCard />
        <Card title={t('Name')} id="settings-name-card" titleId="settings-name-title">
          <Form id="settings-name" onSubmit={(f) => dispatch(['settings/save-name', f])}>
            <Field form="settings-name" name="name" label={t('Name')} required maxLength={100} autoComplete="name" defaultValue={a.name ?? ''} />
            <Submit>{t('Save name')}</Submit>
          </Form>
        </Card>
        <Card title={t('Language')} id="settings-locale-card" titleId="settings-locale-title">
          <Form id="settings-locale" onSubmit={(f) => dispatch(['settings/save-locale', f])}>
            <SelectField
              form="settings-locale"
              id="settings-locale-select"
              name="locale"
              label={t('Language of the pages and emails')}
              defaultValue={a.locale ?? ''}
              options={[{ value: '', label: t('Follow the browser') }, ...LOCALES.map((l) => ({ value: l, label: LOCALE_NAMES[l] }))]}
            />
            <Submit>{t('Save language')}</Submit>
          </Form>
        </Card>
        <Card
          title={t('Email')}
          id="change-email-card"
          titleId="change-email-title"
          description={rich('Your email is <0/>.', [<strong data-field="email">{a.email}</strong>])}
        >
          {state.emailChangeSentTo && (
            <Alert id="change-email-sent" tone="success">
              {rich('Check your new inbox: we sent a confirmation link to <0/>. Your email changes when you open it.', [
                <strong>{state.emailChangeSentTo}</strong>,
              ])}
            </Alert>
          )}
          <Form id="change-email" onSubmit={(f) => dispatch(['settings/change-email', f])}>
            <Field form="change-email" name="new-email" label={t('New email')} type="email" required autoComplete="email" />
            <Field
              form="change-email"
              name="password"
              label={t('Your password (to confirm)')}
              type="password"
              autoComplete="current-password"
              hint={t('Leave it empty if your account has none: you may be asked to sign in again.')}
            />
            <Submit>{t('Change email')}</Submit>
          </Form>
        </Card>
        <Card title={t('Your data')} id="data-card" titleId="data-title">
          <Actions>
            <Button id="export" variant="secondary" disabled={state.busy} onClick={() => dispatch(['account/export'])}>
              {t('Download my data (JSON)')}
            </Button>
            <ButtonLink to="delete-account" id="delete-account-link" variant="secondary">
              {t('Delete account…')}
            </ButtonLink>
          </Actions>
        </Card>
      </Stack>
    </>
  );
}

/** Security: the password, two-factor, passkeys and the sign-in providers. */
export function SecurityPage() {
  const { dispatch } = useApp();
  return (
    <>
      <PageHeader title={t('Security')} description={t('How you sign in, and what protects your account.')} />
      <Stack>
        <Card
          title={t('Password')}
          id="change-password-card"
          titleId="change-password-title"
          description={t('Changing it ends your sessions on other devices.')}
        >
          <Form id="change-password" onSubmit={(f) => dispatch(['settings/change-password', f])}>
            <Field
              form="change-password"
              name="current-password"
              label={t('Current password')}
              type="password"
              autoComplete="current-password"
              hint={t('Leave it empty if your account has none yet.')}
            />
            <Field
              form="change-password"
              name="password"
              label={t('New password (8+ characters)')}
              type="password"
              required
              minLength={8}
              maxLength={128}
              autoComplete="new-password"
            />
            <Field form="change-password" name="confirm-password" label={t('Confirm new password')} type="password" required autoComplete="new-password" />
            <Submit>{t('Change password')}</Submit>
          </Form>
        </Card>
        <TwoFactorSection />
        <PasskeysSection />
        <SignInMethods />
      </Stack>
    </>
  );
}

export function DeleteAccountPage() {
  const { state, dispatch } = useApp();
  const email = state.account?.email ?? '';
  return (
    <>
      <PageHeader title={t('Delete account')} back={<Link to="settings">{t('← Profile')}</Link>} />
      <Card tone="danger">
        <p>
          {rich(
            'This deletes your account, its sessions and memberships, and organizations only you own. It cannot be undone; <0>download your data</0> first if you want a copy.',
            [(text) => <Link to="settings">{text}</Link>],
          )}
        </p>
        <Form id="delete-account" onSubmit={(f) => dispatch(['account/delete', f])}>
          <Field
            form="delete-account"
            name="confirm-email"
            label={t('Type your email ({email}) to confirm', { email })}
            type="text"
            required
            autoComplete="off"
            spellcheck={false}
          />
          <Field
            form="delete-account"
            name="password"
            label={t('Password')}
            type="password"
            autoComplete="current-password"
            hint={t('Leave it empty if your account has none: you may be asked to sign in again.')}
          />
          <Submit danger>{t('Delete my account')}</Submit>
        </Form>
      </Card>
    </>
  );
}
