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
import { Field, Form } from '../ui/field.js';
import { FileUpload, IMAGE_TYPES } from '../ui/file-upload.js';
import { PageHeader } from '../ui/page-header.js';
import { SignInMethods } from '../oidc/pages.js';
import type { TokenRoute } from './events.js';
import { PasskeysSection, TwoFactorSection } from './security-pages.js';

/** What a link page shows while its token is checked, and after. */
function TokenOutcome({ route, done }: { route: TokenRoute; done: string }) {
  const { state } = useApp();
  const page = state.tokenPage?.route === route ? state.tokenPage : undefined;
  const status = page?.status ?? 'checking';
  return (
    <>
      <Alert id="token-status" data-status={status} tone={status === 'failed' ? 'error' : status === 'done' ? 'success' : 'info'}>
        {status === 'checking' ? 'Checking the link…' : status === 'done' ? done : page?.message}
      </Alert>
      <p class="text-sm">{state.token ? <Link to="account">Go to your account</Link> : <Link to="log-in">Log in</Link>}</p>
    </>
  );
}

export function VerifyEmailPage() {
  return (
    <Narrow>
      <PageHeader title="Verify your email" />
      <TokenOutcome route="verify-email" done="Your email address is verified." />
    </Narrow>
  );
}

export function ConfirmEmailPage() {
  return (
    <Narrow>
      <PageHeader title="Confirm your new email" />
      <TokenOutcome route="confirm-email" done="Your new email address is confirmed; use it to log in from now on." />
    </Narrow>
  );
}

export function ForgotPasswordPage() {
  const { state, dispatch } = useApp();
  return (
    <Narrow>
      <PageHeader title="Forgot password" description="Enter your account's email and we'll send you a link to set a new password." />
      {state.forgotSent ? (
        <Alert id="forgot-password-sent" tone="success">
          If an account exists for that address, a link to reset its password is on its way. It works for one hour.
        </Alert>
      ) : (
        <Card>
          <Form id="forgot-password" onSubmit={(f) => dispatch(['forgot-password/submit', f])}>
            <Field form="forgot-password" name="email" label="Email" type="email" required autoComplete="username" />
            <Submit>Send reset link</Submit>
          </Form>
        </Card>
      )}
      <p class="text-sm">
        <Link to="log-in">Back to log in</Link>
      </p>
    </Narrow>
  );
}

export function ResetPasswordPage() {
  const { state, dispatch } = useApp();
  return (
    <Narrow>
      <PageHeader title="Set a new password" />
      {state.resetToken ? (
        <Card>
          <Form id="reset-password" onSubmit={(f) => dispatch(['reset-password/submit', f])}>
            <Field
              form="reset-password"
              name="password"
              label="New password (8+ characters)"
              type="password"
              required
              minLength={8}
              maxLength={128}
              autoComplete="new-password"
            />
            <Field form="reset-password" name="confirm-password" label="Confirm new password" type="password" required autoComplete="new-password" />
            <Submit>Set new password</Submit>
          </Form>
        </Card>
      ) : (
        <Alert id="reset-password-missing" tone="error">
          This link has no token. Open the link from the email again, or <Link to="forgot-password">ask for a new one</Link>.
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
    <Card title="Picture" id="avatar-card" titleId="avatar-title" description="Shown in the header and to the members of your organizations.">
      <div class="flex flex-wrap items-start gap-4">
        <Avatar id="avatar-current" image={a.avatar} name={a.name || a.email} size="lg" alt={a.avatar ? 'Your picture' : 'No picture yet: your initials'} />
        <div class="min-w-0 flex-1 space-y-3">
          <FileUpload
            id="avatar-upload"
            label={a.avatar ? 'Upload a new picture' : 'Upload a picture'}
            accept={IMAGE_TYPES}
            hint="PNG, JPEG or WebP. It is cropped to a square."
            request={{ purpose: 'avatar', onDone: ['account/load'] }}
          />
          {a.avatar && (
            <Button id="remove-avatar" variant="secondary" disabled={state.busy || going} onClick={() => dispatch(['avatar/remove'])}>
              Remove picture
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
        <PageHeader title="Profile" />
        <p class="text-sm text-muted">Loading account…</p>
      </>
    );
  return (
    <>
      <PageHeader title="Profile" description="Your picture, your name, your email address and your data." />
      <Stack>
        <PictureCard />
        <Card title="Name" id="settings-name-card" titleId="settings-name-title">
          <Form id="settings-name" onSubmit={(f) => dispatch(['settings/save-name', f])}>
            <Field form="settings-name" name="name" label="Name" required maxLength={100} autoComplete="name" defaultValue={a.name ?? ''} />
            <Submit>Save name</Submit>
          </Form>
        </Card>
        <Card
          title="Email"
          id="change-email-card"
          titleId="change-email-title"
          description={
            <>
              Your email is <strong data-field="email">{a.email}</strong>.
            </>
          }
        >
          {state.emailChangeSentTo && (
            <Alert id="change-email-sent" tone="success">
              Check your new inbox: we sent a confirmation link to <strong>{state.emailChangeSentTo}</strong>. Your email changes when you open it.
            </Alert>
          )}
          <Form id="change-email" onSubmit={(f) => dispatch(['settings/change-email', f])}>
            <Field form="change-email" name="new-email" label="New email" type="email" required autoComplete="email" />
            <Field
              form="change-email"
              name="password"
              label="Your password (to confirm)"
              type="password"
              autoComplete="current-password"
              hint="Leave it empty if your account has none: you may be asked to sign in again."
            />
            <Submit>Change email</Submit>
          </Form>
        </Card>
        <Card title="Your data" id="data-card" titleId="data-title">
          <Actions>
            <Button id="export" variant="secondary" disabled={state.busy} onClick={() => dispatch(['account/export'])}>
              Download my data (JSON)
            </Button>
            <ButtonLink to="delete-account" id="delete-account-link" variant="secondary">
              Delete account…
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
      <PageHeader title="Security" description="How you sign in, and what protects your account." />
      <Stack>
        <Card title="Password" id="change-password-card" titleId="change-password-title" description="Changing it ends your sessions on other devices.">
          <Form id="change-password" onSubmit={(f) => dispatch(['settings/change-password', f])}>
            <Field
              form="change-password"
              name="current-password"
              label="Current password"
              type="password"
              autoComplete="current-password"
              hint="Leave it empty if your account has none yet."
            />
            <Field
              form="change-password"
              name="password"
              label="New password (8+ characters)"
              type="password"
              required
              minLength={8}
              maxLength={128}
              autoComplete="new-password"
            />
            <Field form="change-password" name="confirm-password" label="Confirm new password" type="password" required autoComplete="new-password" />
            <Submit>Change password</Submit>
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
      <PageHeader title="Delete account" back={<Link to="settings">← Profile</Link>} />
      <Card tone="danger">
        <p>
          This deletes your account, its sessions and memberships, and organizations only you own. It cannot be undone;{' '}
          <Link to="settings">download your data</Link> first if you want a copy.
        </p>
        <Form id="delete-account" onSubmit={(f) => dispatch(['account/delete', f])}>
          <Field
            form="delete-account"
            name="confirm-email"
            label={`Type your email (${email}) to confirm`}
            type="text"
            required
            autoComplete="off"
            spellcheck={false}
          />
          <Field
            form="delete-account"
            name="password"
            label="Password"
            type="password"
            autoComplete="current-password"
            hint="Leave it empty if your account has none: you may be asked to sign in again."
          />
          <Submit danger>Delete my account</Submit>
        </Form>
      </Card>
    </>
  );
}
