/**
 * Sign-in security views: the log-in's second step and the passkey sign-in button (log-in
 * page), and the account page's two-factor and passkey sections. They read the state and
 * dispatch the events of account/security-events.ts.
 */
import { generate } from 'lean-qr';
import { useEffect, useState } from 'preact/hooks';
import { Field, Form, Submit, useApp } from '../ui/app.js';
import type { Passkey } from './security-events.js';

const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : 'never');

/** The code form after a right password; a backup code instead when the app is not at hand. */
export function MfaStep() {
  const { state, dispatch } = useApp();
  const backup = state.mfa?.backup ?? false;
  return (
    <>
      <h1>Two-factor authentication</h1>
      <Form id="mfa" onSubmit={(f) => dispatch(['mfa/submit', f])}>
        {backup ? (
          <Field form="mfa" name="backup-code" label="Backup code" required autoComplete="off" spellcheck={false} key="backup" />
        ) : (
          <Field form="mfa" name="code" label="Code from your authenticator app" required autoComplete="one-time-code" maxLength={16} key="code" />
        )}
        <Submit>Verify</Submit>
      </Form>
      <p>
        <button id="mfa-toggle" type="button" class="link" onClick={() => dispatch(['mfa/use-backup-code', !backup])}>
          {backup ? 'Use a code from the app instead' : 'Use a backup code instead'}
        </button>
      </p>
      <p><button id="mfa-cancel" type="button" class="link" onClick={() => dispatch(['mfa/cancel'])}>Back to log in</button></p>
    </>
  );
}

export function PasskeySignIn() {
  const { state, dispatch } = useApp();
  if (typeof window !== 'undefined' && !window.PublicKeyCredential) return null;
  return (
    <p>
      <button id="passkey-sign-in" type="button" class="secondary" disabled={state.busy} onClick={() => dispatch(['passkey/sign-in'])}>
        Sign in with a passkey
      </button>
    </p>
  );
}

/** The otpauth:// URI as a QR code (lean-qr, about 4 KB), with the secret as text beside it. */
function QrCode({ url }: { url: string }) {
  const [src, setSrc] = useState<string>();
  useEffect(() => { setSrc(generate(url).toDataURL({ scale: 5 })); }, [url]);
  return src ? <img id="two-factor-qr" src={src} alt="QR code to scan with an authenticator app" width={200} height={200} style="image-rendering: pixelated" /> : null;
}

export function TwoFactorSection() {
  const { state, dispatch } = useApp();
  const enabled = state.account?.['two-factor-enabled'] === true;
  const setup = state.twoFactorSetup;
  return (
    <section aria-labelledby="two-factor-title" id="two-factor" data-enabled={enabled ? 'true' : 'false'}>
      <h2 id="two-factor-title">Two-factor authentication</h2>
      {state.backupCodes && (
        <div id="backup-codes" role="status">
          <p><strong>Save these backup codes</strong> somewhere safe. Each signs you in once if you lose your authenticator app; they are not shown again.</p>
          <ul class="codes">{state.backupCodes.map((c) => <li key={c}><code>{c}</code></li>)}</ul>
          <button id="backup-codes-done" type="button" onClick={() => dispatch(['backup-codes/dismiss'])}>I saved them</button>
        </div>
      )}
      {enabled ? (
        <>
          <p>On: log-in asks for a code from your authenticator app.</p>
          <Form id="two-factor-disable" onSubmit={(f) => dispatch(['two-factor/disable', f])}>
            <Field form="two-factor-disable" name="password" label="Your password" type="password" required autoComplete="current-password" />
            <Field form="two-factor-disable" name="code" label="Code from the app" required autoComplete="one-time-code" maxLength={16} />
            <Submit danger>Turn off two-factor</Submit>
          </Form>
        </>
      ) : setup ? (
        <>
          <p>Scan the QR code with an authenticator app, or type the key into it. Then enter the code it shows.</p>
          <QrCode url={setup.url} />
          <p>Key: <code id="two-factor-secret">{setup.secret}</code></p>
          <p class="muted">Link: <code id="two-factor-url">{setup.url}</code></p>
          <Form id="two-factor-enable" onSubmit={(f) => dispatch(['two-factor/enable', f])}>
            <Field form="two-factor-enable" name="code" label="Code from the app" required autoComplete="one-time-code" maxLength={16} />
            <Field form="two-factor-enable" name="password" label="Your password (to confirm)" type="password" required autoComplete="current-password" />
            <Submit>Turn on two-factor</Submit>
          </Form>
        </>
      ) : (
        <>
          <p>Off. With it on, log-in also asks for a code from an authenticator app.</p>
          <button id="two-factor-setup" type="button" disabled={state.busy} onClick={() => dispatch(['two-factor/setup'])}>Set up two-factor</button>
        </>
      )}
    </section>
  );
}

function PasskeyRow({ passkey }: { passkey: Passkey }) {
  const { state, dispatch } = useApp();
  const rename = () => {
    const name = window.prompt('New name for this passkey', passkey.name)?.trim();
    if (name && name !== passkey.name) dispatch(['passkeys/rename', passkey.id, name]);
  };
  return (
    <tr data-passkey={passkey.id}>
      <td data-field="name">{passkey.name}</td>
      <td data-field="created-at">{when(passkey['created-at'])}</td>
      <td data-field="last-used-at">{when(passkey['last-used-at'])}</td>
      <td>
        <button type="button" class="secondary rename-passkey" disabled={state.busy} onClick={rename}>Rename</button>{' '}
        <button type="button" class="secondary remove-passkey" disabled={state.busy} onClick={() => dispatch(['passkeys/remove', passkey.id])}>Remove</button>
      </td>
    </tr>
  );
}

export function PasskeysSection() {
  const { state, dispatch } = useApp();
  useEffect(() => { if (!state.passkeys) dispatch(['passkeys/load']); }, []);
  const passkeys = state.passkeys;
  return (
    <section aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">Passkeys</h2>
      <p class="muted">Sign in with your device's screen lock or a security key instead of a password and code.</p>
      {!passkeys ? <p class="muted">Loading passkeys…</p> : passkeys.length === 0 ? <p id="no-passkeys">No passkeys yet.</p> : (
        <table id="passkeys">
          <thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>{passkeys.map((p) => <PasskeyRow key={p.id} passkey={p} />)}</tbody>
        </table>
      )}
      <Form id="passkey-add" onSubmit={(f) => dispatch(['passkeys/add', f])}>
        <Field form="passkey-add" name="name" label="Name for a new passkey" maxLength={100} autoComplete="off" />
        <Field form="passkey-add" name="password" label="Your password (to add a passkey)" type="password" required autoComplete="current-password" />
        <Submit>Add a passkey</Submit>
      </Form>
    </section>
  );
}
