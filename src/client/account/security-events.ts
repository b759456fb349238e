/**
 * Sign-in security events: the log-in's second step (a TOTP or backup code after the password),
 * signing in with a passkey, and on the account page two-factor (set up, turn on, backup codes
 * shown once, turn off) and passkeys (add, rename, remove). The browser's WebAuthn ceremonies
 * are effects given to `registerSecurity` (@simplewebauthn/browser in main.ts), so tests can
 * record them. docs/sign-in.md.
 */
import type { FailureBody } from '../shell/form-errors.js';
import type { AppState } from '../shell/state.js';
import type { EventCore, EventVector } from '../core.js';
import { t } from '../i18n/words.js';

export interface Passkey {
  id: string;
  name: string;
  'created-at': string;
  'last-used-at': string | null;
}

/** This part of the app state; every field is absent until an event sets it. */
export interface SecurityState {
  /** a log-in waiting for its second factor: the mfa-token, and whether a backup code is typed instead */
  mfa?: { token: string; backup: boolean };
  /** a pending two-factor setup: the secret and the otpauth:// URI, shown until it is turned on */
  /** the pending secret, and its otpauth:// URI as a QR code (a PNG data URL the server draws) */
  twoFactorSetup?: { secret: string; url: string; qr: string };
  /** the backup codes, shown once after two-factor was turned on */
  backupCodes?: string[];
  /** undefined until loaded */
  passkeys?: Passkey[];
}

declare module '../shell/state.js' {
  interface AppState extends SecurityState {}
}

/** The WebAuthn ceremonies: JSON options in, the credential's JSON out (a rejection when cancelled). */
export interface WebAuthnIo {
  register: (options: unknown) => Promise<unknown>;
  authenticate: (options: unknown) => Promise<unknown>;
}

interface Ceremony {
  options: unknown;
  onSuccess: EventVector;
  onFailure: EventVector;
}

/** `{code}` or `{backup-code}`, spaces gone, nothing empty. */
export function secondFactorOf(form: Record<string, string>, backup: boolean): Record<string, string> {
  return backup ? { 'backup-code': (form['backup-code'] ?? '').trim() } : { code: (form.code ?? '').replace(/\s/g, '') };
}

export function registerSecurity(core: EventCore<AppState>, webauthn: WebAuthnIo): void {
  const ceremony =
    (run: (options: unknown) => Promise<unknown>) =>
    ({ options, onSuccess, onFailure }: Ceremony) => {
      run(options).then(
        (credential) => core.dispatch([...onSuccess, credential] as EventVector),
        (err: unknown) =>
          core.dispatch([...onFailure, { message: err instanceof Error ? err.message : String(err), name: (err as Error)?.name }] as EventVector),
      );
    };
  core.regFx('webauthn/register', ceremony(webauthn.register));
  core.regFx('webauthn/authenticate', ceremony(webauthn.authenticate));

  core
    // log-in answered: tokens, or a second step
    .regEvent('log-in/answered', ({ state }, [, response]) => {
      const r = response as { 'mfa-required'?: boolean; 'mfa-token'?: string };
      if (r['mfa-required'] && r['mfa-token']) return { db: { ...state, busy: false, mfa: { token: r['mfa-token'], backup: false } } };
      return { db: { ...state, mfa: undefined }, dispatch: ['auth/logged-in', {}, response] };
    })
    // a first factor elsewhere (a provider's callback) handed over its mfa-token in the URL's fragment
    .regEvent('mfa/pending', ({ state }, [, token]) => ({ db: { ...state, mfa: { token: token as string, backup: false } } }))
    .regEvent('mfa/use-backup-code', ({ state }, [, backup]) => (state.mfa ? { db: { ...state, mfa: { ...state.mfa, backup: Boolean(backup) } } } : undefined))
    .regEvent('mfa/cancel', ({ state }) => ({ db: { ...state, mfa: undefined } }))
    .regEvent('mfa/submit', ({ state }, [, form]) => {
      if (!state.mfa) return;
      return {
        db: { ...state, busy: true },
        'http/api': {
          url: 'account/log-in/mfa',
          method: 'post',
          body: { 'mfa-token': state.mfa.token, ...secondFactorOf(form as Record<string, string>, state.mfa.backup) },
          onSuccess: ['log-in/answered'],
          onFailure: ['mfa/failed'],
        },
      };
    })
    .regEvent('mfa/failed', ({ state }, [, failure]) => {
      const f = failure as FailureBody;
      // the mfa-token is spent or expired: the log-in starts over with the password
      const restart = f.errors?.some((e) => e.path === '/mfa-token');
      return {
        db: { ...state, busy: false, mfa: restart ? undefined : state.mfa },
        dispatch: ['toast/error', { message: restart ? t('That took too long or too many tries; log in again') : (f.message ?? t('The code is wrong')) }],
      };
    })

    // signing in with a passkey
    .regEvent('passkey/sign-in', ({ state }) => ({
      db: { ...state, busy: true },
      'http/api': {
        url: 'auth/passkey/options',
        method: 'post',
        body: {},
        onSuccess: ['passkey/sign-in-options'],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('passkey/sign-in-options', (_ctx, [, answer]) => {
      const a = answer as { 'challenge-id': string; options: unknown };
      return { 'webauthn/authenticate': { options: a.options, onSuccess: ['passkey/sign-in-verify', a['challenge-id']], onFailure: ['passkey/cancelled'] } };
    })
    .regEvent('passkey/sign-in-verify', ({ state }, [, challengeId, credential]) => ({
      db: { ...state, busy: true },
      'http/api': {
        url: 'auth/passkey/verify',
        method: 'post',
        body: { 'challenge-id': challengeId, response: credential },
        onSuccess: ['log-in/answered'],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('passkey/cancelled', ({ state }, [, error]) => ({
      db: { ...state, busy: false },
      dispatch: [
        'toast/error',
        {
          message: (error as { message?: string })?.message
            ? t('No passkey was used: {reason}', { reason: (error as { message: string }).message })
            : t('No passkey was used'),
        },
      ],
    }))

    // two-factor on the account page
    .regEvent('two-factor/setup', ({ state }) => ({
      db: { ...state, busy: true, backupCodes: undefined },
      'http/auth-api': {
        url: 'account/2fa/setup',
        method: 'post',
        body: {},
        onSuccess: ['two-factor/pending'],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('two-factor/pending', ({ state }, [, setup]) => {
      const s = setup as { secret: string; 'otpauth-url': string; 'otpauth-qr': string };
      return { db: { ...state, busy: false, twoFactorSetup: { secret: s.secret, url: s['otpauth-url'], qr: s['otpauth-qr'] } } };
    })
    .regEvent('two-factor/enable', ({ state }, [, form]) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: 'account/2fa/enable',
        method: 'post',
        // the password is asked by the re-authentication dialog when the server wants it
        body: secondFactorOf(form as Record<string, string>, false),
        onSuccess: ['two-factor/enabled'],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('two-factor/enabled', ({ state }, [, answer]) => ({
      db: {
        ...state,
        busy: false,
        twoFactorSetup: undefined,
        backupCodes: (answer as { 'backup-codes': string[] })['backup-codes'],
        account: state.account && { ...state.account, 'two-factor-enabled': true },
      },
    }))
    .regEvent('backup-codes/regenerate', ({ state }, [, form]) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: 'account/2fa/backup-codes',
        method: 'post',
        body: secondFactorOf(form as Record<string, string>, false),
        onSuccess: ['backup-codes/regenerated'],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('backup-codes/regenerated', ({ state }, [, answer]) => ({
      db: { ...state, busy: false, backupCodes: (answer as { 'backup-codes': string[] })['backup-codes'] },
      dispatch: ['toast/info', { message: t('New backup codes: the old ones no longer work') }],
    }))
    .regEvent('backup-codes/dismiss', ({ state }) => ({ db: { ...state, backupCodes: undefined } }))
    .regEvent('two-factor/disable', ({ state }, [, form]) => {
      const f = form as Record<string, string>;
      const backup = Boolean(f['backup-code']);
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: 'account/2fa/disable',
          method: 'post',
          body: secondFactorOf(f, backup),
          onSuccess: ['two-factor/disabled'],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('two-factor/disabled', ({ state }) => ({
      db: { ...state, busy: false, backupCodes: undefined, account: state.account && { ...state.account, 'two-factor-enabled': false } },
      dispatch: ['toast/info', { message: t('Two-factor authentication is off') }],
    }))

    // passkeys on the account page
    .regEvent('passkeys/load', () => ({
      'http/auth-api': { url: 'account/passkeys', successPath: ['passkeys'], onSuccess: ['passkeys/loaded'], onFailure: ['request/failed'] },
    }))
    .regEvent('passkeys/loaded', ({ state }, [, passkeys]) => ({ db: { ...state, passkeys: passkeys as Passkey[] } }))
    .regEvent('passkeys/add', ({ state }, [, form]) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: 'account/passkeys/register/options',
        method: 'post',
        body: {},
        onSuccess: ['passkeys/create', (form as { name?: string }).name ?? ''],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('passkeys/create', (_ctx, [, name, options]) => ({
      'webauthn/register': { options, onSuccess: ['passkeys/verify', name], onFailure: ['passkey/cancelled'] },
    }))
    .regEvent('passkeys/verify', (_ctx, [, name, credential]) => ({
      'http/auth-api': {
        url: 'account/passkeys/register/verify',
        method: 'post',
        body: { response: credential, ...(name ? { name } : {}) },
        onSuccess: ['passkeys/added'],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('passkeys/added', ({ state }, [, passkey]) => ({
      db: { ...state, busy: false, passkeys: [...(state.passkeys ?? []), passkey as Passkey] },
      dispatch: ['toast/info', { message: t('Passkey added') }],
    }))
    .regEvent('passkeys/rename', ({ state }, [, id, name]) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: `account/passkeys/${encodeURIComponent(id as string)}`,
        method: 'patch',
        body: { name },
        onSuccess: ['passkeys/renamed'],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('passkeys/renamed', ({ state }, [, passkey]) => {
      const p = passkey as Passkey;
      return { db: { ...state, busy: false, passkeys: state.passkeys?.map((k) => (k.id === p.id ? p : k)) } };
    })
    .regEvent('passkeys/remove', ({ state }, [, id]) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: `account/passkeys/${encodeURIComponent(id as string)}`,
        method: 'delete',
        body: {},
        onSuccess: ['passkeys/removed', id],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('passkeys/removed', ({ state }, [, id]) => ({
      db: { ...state, busy: false, passkeys: state.passkeys?.filter((k) => k.id !== id) },
    }));
}
