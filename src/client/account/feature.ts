/** The account feature: log-in and sign-up, the account page, the lifecycle's pages, two-factor and passkeys. */
import type { Feature } from '../shell/features.js';
import { AccountPage, LogInPage, SignUpPage } from './auth-pages.js';
import { registerAccount } from './events.js';
import { ConfirmEmailPage, DeleteAccountPage, ForgotPasswordPage, ResetPasswordPage, SessionsPage, SettingsPage, VerifyEmailPage } from './pages.js';
import { registerSecurity } from './security-events.js';

export const account: Feature = {
  id: 'account',
  routes: [
    { name: 'log-in', path: '/log-in', page: LogInPage, access: 'entry' },
    { name: 'sign-up', path: '/sign-up', page: SignUpPage, access: 'entry' },
    { name: 'account', path: '/account', page: AccountPage, access: 'signed-in' },
    { name: 'forgot-password', path: '/forgot-password', page: ForgotPasswordPage, access: 'public' },
    { name: 'reset-password', path: '/reset-password', page: ResetPasswordPage, access: 'public' },
    { name: 'verify-email', path: '/verify-email', page: VerifyEmailPage, access: 'public' },
    { name: 'confirm-email', path: '/confirm-email', page: ConfirmEmailPage, access: 'public' },
    { name: 'settings', path: '/settings', page: SettingsPage, access: 'signed-in' },
    { name: 'sessions', path: '/settings/sessions', page: SessionsPage, access: 'signed-in' },
    { name: 'delete-account', path: '/settings/delete', page: DeleteAccountPage, access: 'signed-in' },
  ],
  register(core, io) {
    registerAccount(core, io);
    registerSecurity(core, io.webauthn);
  },
  enter: 'page/enter',
  forgetOnLogOut: ['passkeys', 'backupCodes', 'twoFactorSetup'],
};
