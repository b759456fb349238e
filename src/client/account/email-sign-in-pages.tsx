/**
 * Email sign-in's views: the card on the log-in page (ask for a message, then type its code)
 * and the `/auth/email` page the message's link opens. They dispatch email-sign-in.ts's events.
 */
import { Link, useApp } from '../ui/app.js';
import { Button, Submit } from '../ui/button.js';
import { Actions, Card, Narrow } from '../ui/card.js';
import { Alert } from '../ui/feedback.js';
import { Field, Form } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { MfaStep } from './security-pages.js';
import { t } from '../i18n/words.js';
import { rich } from '../i18n/rich.js';

/** The email form, then (once sent) the code form; a button until asked. */
export function EmailSignInCard() {
  const { state, dispatch } = useApp();
  const flow = state.emailSignIn;
  if (!flow || flow.step === 'checking' || flow.step === 'failed') {
    return (
      <Button id="email-sign-in" variant="secondary" class="w-full" disabled={state.busy} onClick={() => dispatch(['email-sign-in/ask'])}>
        {t('Email me a sign-in link')}
      </Button>
    );
  }
  if (flow.step === 'ask') {
    return (
      <Form id="email-sign-in-start" onSubmit={(f) => dispatch(['email-sign-in/start', f])}>
        <Field form="email-sign-in-start" name="email" label={t('Email for a sign-in link')} type="email" required autoComplete="username" />
        <Actions>
          <Submit>{t('Email me a link')}</Submit>
          <Button variant="link" onClick={() => dispatch(['email-sign-in/cancel'])}>
            {t('Cancel')}
          </Button>
        </Actions>
      </Form>
    );
  }
  return (
    <div id="email-sign-in-sent" class="space-y-4">
      <Alert tone="success">
        {rich('Check <0/>: open the link in the message, or type its code here. Both work once, for 15 minutes.', [<strong>{flow.email}</strong>])}
      </Alert>
      <Form id="email-sign-in-code" onSubmit={(f) => dispatch(['email-sign-in/code', f])}>
        <Field form="email-sign-in-code" name="code" label={t('Code from the email')} required autoComplete="one-time-code" maxLength={16} />
        <Submit>{t('Sign in')}</Submit>
      </Form>
    </div>
  );
}

/** `/auth/email`: the link's landing page; with no token, the form to ask for a message. */
export function EmailSignInPage() {
  const { state } = useApp();
  if (state.mfa) return <MfaStep />;
  const flow = state.emailSignIn;
  return (
    <Narrow>
      <PageHeader title={t('Sign in by email')} />
      {flow?.step === 'checking' && (
        <p id="email-sign-in-status" data-status="checking" role="status" class="text-sm text-muted">
          {t('Signing you in…')}
        </p>
      )}
      {flow?.step === 'failed' && (
        <Alert id="email-sign-in-status" tone="error" data-status="failed">
          {flow.message} <Link to="log-in">{t('Back to log in')}</Link>
        </Alert>
      )}
      {(!flow || flow.step === 'ask' || flow.step === 'sent') && (
        <Card>
          <EmailSignInCard />
        </Card>
      )}
    </Narrow>
  );
}
