/** The account feature: log-in and sign-up, the dashboard, the profile, security, sessions, the lifecycle's link pages. */
import { LayoutDashboard, MonitorSmartphone, Shield, User } from 'lucide';
import type { Feature } from '../shell/features.js';
import { AccountPage, LogInPage, SignUpPage } from './auth-pages.js';
import { registerAccount } from './events.js';
import { ConfirmEmailPage, DeleteAccountPage, ForgotPasswordPage, ResetPasswordPage, SecurityPage, SettingsPage, VerifyEmailPage } from './pages.js';
import { registerSecurity } from './security-events.js';
import { registerSessions } from './sessions-events.js';
import { SessionsPage } from './sessions-pages.js';
import { TwoFactorLogInPage } from './security-pages.js';
import { registerEmailSignIn } from './email-sign-in.js';
import { EmailSignInPage } from './email-sign-in-pages.js';
import { msg } from '../i18n/words.js';

export const account: Feature = {
  id: 'account',
  routes: [
    { name: 'log-in', path: '/log-in', page: LogInPage, access: 'entry', title: msg('Log in') },
    { name: 'log-in-two-factor', path: '/log-in/two-factor', page: TwoFactorLogInPage, access: 'entry', title: msg('Two-factor authentication') },
    { name: 'email-sign-in', path: '/auth/email', page: EmailSignInPage, access: 'entry', title: msg('Sign in by email') },
    { name: 'sign-up', path: '/sign-up', page: SignUpPage, access: 'entry', title: msg('Sign up') },
    { name: 'account', path: '/account', page: AccountPage, access: 'signed-in', title: msg('Dashboard') },
    { name: 'forgot-password', path: '/forgot-password', page: ForgotPasswordPage, access: 'public', title: msg('Forgot password') },
    { name: 'reset-password', path: '/reset-password', page: ResetPasswordPage, access: 'public', title: msg('Set a new password') },
    { name: 'verify-email', path: '/verify-email', page: VerifyEmailPage, access: 'public', title: msg('Verify your email') },
    { name: 'confirm-email', path: '/confirm-email', page: ConfirmEmailPage, access: 'public', title: msg('Confirm your new email') },
    { name: 'settings', path: '/settings', page: SettingsPage, access: 'signed-in', title: msg('Profile') },
    { name: 'security', path: '/settings/security', page: SecurityPage, access: 'signed-in', title: msg('Security') },
    { name: 'sessions', path: '/settings/sessions', page: SessionsPage, access: 'signed-in', title: msg('Sessions') },
    { name: 'delete-account', path: '/settings/delete', page: DeleteAccountPage, access: 'signed-in', title: msg('Delete account') },
  ],
  nav: [
    { section: 'main', route: 'account', label: msg('Dashboard'), id: 'nav-account', icon: LayoutDashboard, order: 0 },
    { section: 'settings', route: 'settings', label: msg('Profile'), id: 'nav-settings', icon: User, order: 0 },
    { section: 'settings', route: 'security', label: msg('Security'), id: 'nav-security', icon: Shield, order: 1 },
    { section: 'settings', route: 'sessions', label: msg('Sessions'), id: 'nav-sessions', icon: MonitorSmartphone, order: 2 },
  ],
  register(core, io) {
    registerAccount(core, io);
    registerSecurity(core, io.webauthn);
    registerSessions(core);
    registerEmailSignIn(core);
  },
  enter: 'page/enter',
  forgetOnLogOut: ['passkeys', 'backupCodes', 'twoFactorSetup', 'emailSignIn'],
};
