/**
 * Sign-in security views: the log-in's second step and the passkey sign-in button (log-in
 * page), and the security page's two-factor and passkey cards. They read the state and
 * dispatch the events of account/security-events.ts.
 */
import { useEffect, useState } from 'preact/hooks';
import { Link, useApp } from '../ui/app.js';
import { Button, Submit } from '../ui/button.js';
import { Actions, Card, Narrow } from '../ui/card.js';
import { ConfirmButton, FormDialog } from '../ui/dialog.js';
import { Alert, Badge } from '../ui/feedback.js';
import { Field, Form } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import type { Passkey } from './security-events.js';
import { dateTime } from '../ui/dates.js';
import { t } from '../i18n/words.js';
import { rich } from '../i18n/rich.js';

/** The code form after a first factor (a password, an email link, a provider); a backup code instead when the app is not at hand. */
export function MfaStep() {
  const { state, dispatch } = useApp();
  const backup = state.mfa?.backup ?? false;
  return (
    <Narrow>
      <PageHeader title={t('Two-factor authentication')} />
      <Card>
        <Form id="mfa" onSubmit={(f) => dispatch(['mfa/submit', f])}>
          {backup ? (
            <Field form="mfa" name="backup-code" label={t('Backup code')} required autoComplete="off" spellcheck={false} key="backup" />
          ) : (
            <Field form="mfa" name="code" label={t('Code from your authenticator app')} required autoComplete="one-time-code" maxLength={16} key="code" />
          )}
          <Submit>{t('Verify')}</Submit>
        </Form>
        <Actions>
          <Button id="mfa-toggle" variant="link" onClick={() => dispatch(['mfa/use-backup-code', !backup])}>
            {backup ? t('Use a code from the app instead') : t('Use a backup code instead')}
          </Button>
          <Button id="mfa-cancel" variant="link" onClick={() => dispatch(['mfa/cancel'])}>
            {t('Back to log in')}
          </Button>
        </Actions>
      </Card>
    </Narrow>
  );
}

/** The mfa-token a provider's callback put in the fragment (`#mfa-token=…`), or undefined. */
export function fragmentToken(hash: string): string | undefined {
  return new URLSearchParams(hash.replace(/^#/, '')).get('mfa-token') ?? undefined;
}

/**
 * `/log-in/two-factor`: the second step of a sign-in begun elsewhere (a provider). The token
 * comes in the fragment, which never reaches a server; it is read once and cleared from the
 * address bar and the history, so it is not bookmarked or shared.
 */
export function TwoFactorLogInPage() {
  const { state, dispatch } = useApp();
  const [read, setRead] = useState(false);
  useEffect(() => {
    const token = fragmentToken(location.hash);
    if (location.hash) history.replaceState(history.state, '', `${location.pathname}${location.search}`);
    if (token) dispatch(['mfa/pending', token]);
    setRead(true);
  }, []);
  if (state.mfa) return <MfaStep />;
  return (
    <Narrow>
      <PageHeader title={t('Two-factor authentication')} />
      {read && (
        <Alert id="two-factor-missing" tone="error">
          {rich('This sign-in expired or was already completed. <0>Log in again</0>.', [(text) => <Link to="log-in">{text}</Link>])}
        </Alert>
      )}
    </Narrow>
  );
}

export function PasskeySignIn() {
  const { state, dispatch } = useApp();
  if (typeof window !== 'undefined' && !window.PublicKeyCredential) return null;
  return (
    <Button id="passkey-sign-in" variant="secondary" class="w-full" disabled={state.busy} onClick={() => dispatch(['passkey/sign-in'])}>
      {t('Sign in with a passkey')}
    </Button>
  );
}

export function TwoFactorSection() {
  const { state, dispatch } = useApp();
  const enabled = state.account?.['two-factor-enabled'] === true;
  const setup = state.twoFactorSetup;
  return (
    <Card
      id="two-factor"
      titleId="two-factor-title"
      data-enabled={enabled ? 'true' : 'false'}
      title={
        <>
          {t('Two-factor authentication')} <Badge tone={enabled ? 'success' : 'warning'}>{enabled ? t('on') : t('off')}</Badge>
        </>
      }
    >
      {state.backupCodes && (
        <div id="backup-codes">
          <Alert tone="warning">
            <p>
              {rich('<0>Save these backup codes</0> somewhere safe. Each signs you in once if you lose your authenticator app; they are not shown again.', [
                (text) => <strong>{text}</strong>,
              ])}
            </p>
            <ul class="my-3 grid grid-cols-2 gap-1 font-mono">
              {state.backupCodes.map((c) => (
                <li key={c}>
                  <code>{c}</code>
                </li>
              ))}
            </ul>
            <Button id="backup-codes-done" onClick={() => dispatch(['backup-codes/dismiss'])}>
              {t('I saved them')}
            </Button>
          </Alert>
        </div>
      )}
      {enabled ? (
        <>
          <p>{t('On: log-in asks for a code from your authenticator app.')}</p>
          <Form id="two-factor-disable" onSubmit={(f) => dispatch(['two-factor/disable', f])}>
            <Field form="two-factor-disable" name="code" label={t('Code from the app')} required autoComplete="one-time-code" maxLength={16} />
            <Submit danger>{t('Turn off two-factor')}</Submit>
          </Form>
          <Form id="backup-codes-regenerate" onSubmit={(f) => dispatch(['backup-codes/regenerate', f])}>
            <p class="text-sm text-muted">{t('Lost your backup codes, or used most of them? New ones replace them all.')}</p>
            <Field
              form="backup-codes-regenerate"
              name="code"
              label={t('Code from the app (for new backup codes)')}
              required
              autoComplete="one-time-code"
              maxLength={16}
            />
            <Submit id="backup-codes-regenerate-submit">{t('Regenerate backup codes')}</Submit>
          </Form>
        </>
      ) : setup ? (
        <>
          <p>{t('Scan the QR code with an authenticator app, or type the key into it. Then enter the code it shows.')}</p>
          <img
            id="two-factor-qr"
            src={setup.qr}
            alt={t('QR code to scan with an authenticator app')}
            width={200}
            height={200}
            class="pixelated rounded-lg bg-white"
          />
          <p>
            {t('Key:')}{' '}
            <code id="two-factor-secret" class="break-all">
              {setup.secret}
            </code>
          </p>
          <p class="text-muted">
            {t('Link:')}{' '}
            <code id="two-factor-url" class="break-all">
              {setup.url}
            </code>
          </p>
          <Form id="two-factor-enable" onSubmit={(f) => dispatch(['two-factor/enable', f])}>
            <Field form="two-factor-enable" name="code" label={t('Code from the app')} required autoComplete="one-time-code" maxLength={16} />
            <Submit>{t('Turn on two-factor')}</Submit>
          </Form>
        </>
      ) : (
        <>
          <p>{t('Off. With it on, log-in also asks for a code from an authenticator app.')}</p>
          <Actions>
            <Button id="two-factor-setup" disabled={state.busy} onClick={() => dispatch(['two-factor/setup'])}>
              {t('Set up two-factor')}
            </Button>
          </Actions>
        </>
      )}
    </Card>
  );
}

/** The shell's modal dialog (not the browser's prompt): styled, labelled, with the name's limits. */
function RenamePasskeyDialog({ passkey, onClose }: { passkey: Passkey; onClose: () => void }) {
  const { dispatch } = useApp();
  return (
    <FormDialog
      id="rename-passkey-dialog"
      title={t('Rename passkey')}
      submitLabel={t('Save name')}
      message={t('A name that tells your devices and keys apart.')}
      onCancel={onClose}
      onSubmit={(fields) => {
        onClose();
        const name = (fields.name ?? '').trim();
        if (name && name !== passkey.name) dispatch(['passkeys/rename', passkey.id, name]);
      }}
    >
      <Field form="rename-passkey" id="passkey-name" name="name" label={t('Name')} required maxLength={100} autoComplete="off" defaultValue={passkey.name} />
    </FormDialog>
  );
}

function PasskeyRow({ passkey }: { passkey: Passkey }) {
  const { state, dispatch } = useApp();
  const [renaming, setRenaming] = useState(false);
  return (
    <tr data-passkey={passkey.id}>
      <td data-field="name">{passkey.name}</td>
      <td data-field="created-at">{dateTime(passkey['created-at'], t('never'))}</td>
      <td data-field="last-used-at">{dateTime(passkey['last-used-at'], t('never'))}</td>
      <td>
        <Actions>
          <Button variant="secondary" class="rename-passkey" disabled={state.busy} aria-haspopup="dialog" onClick={() => setRenaming(true)}>
            {t('Rename')}
          </Button>
          {renaming && <RenamePasskeyDialog passkey={passkey} onClose={() => setRenaming(false)} />}
          <ConfirmButton
            variant="secondary"
            class="remove-passkey"
            disabled={state.busy}
            title={t('Remove the passkey {name}?', { name: passkey.name })}
            message={t('It will no longer sign you in.')}
            confirmLabel={t('Remove')}
            onConfirm={() => dispatch(['passkeys/remove', passkey.id])}
          >
            {t('Remove')}
          </ConfirmButton>
        </Actions>
      </td>
    </tr>
  );
}

export function PasskeysSection() {
  const { state, dispatch } = useApp();
  useEffect(() => {
    if (!state.passkeys) dispatch(['passkeys/load']);
  }, []);
  return (
    <Card
      id="passkeys-card"
      titleId="passkeys-title"
      title={t('Passkeys')}
      description={t("Sign in with your device's screen lock or a security key instead of a password and code.")}
    >
      <Table
        id="passkeys"
        caption={t('Your passkeys')}
        headers={[t('Name'), t('Added'), t('Last used'), '']}
        rows={state.passkeys}
        loadingText={t('Loading passkeys…')}
        empty={t('No passkeys yet.')}
        emptyId="no-passkeys"
        render={(p) => <PasskeyRow key={p.id} passkey={p} />}
      />
      <Form id="passkey-add" onSubmit={(f) => dispatch(['passkeys/add', f])}>
        <Field form="passkey-add" name="name" label={t('Name for a new passkey')} maxLength={100} autoComplete="off" />
        <Submit>{t('Add a passkey')}</Submit>
      </Form>
    </Card>
  );
}
