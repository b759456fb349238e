/**
 * The app's state as the shell knows it: the route, the session, toasts. Each feature adds
 * its own slice to {@link AppState} from its own folder (declaration merging):
 *
 *   declare module '../shell/state.js' {
 *     interface AppState extends BillingState {}
 *   }
 *
 * so this module imports no feature, every feature imports it, and the whole state's type is
 * the sum of the features the compiler sees (src/client/app.ts lists them).
 */

/** A route's name (`log-in`, `org-audit`, ...): the features' route tables name them. */
export type Route = string;

import type { Locale } from '../../shared/locales.js';
import type { HttpOptions } from '../http.js';

/** An image's signed links (valid 5 minutes from the answer): the original and its 64 and 256 px WebP renditions. */
export interface ImageLinks {
  id: string;
  url: string;
  renditions: Record<'64' | '256', string>;
}

export interface Account {
  id: string;
  email: string;
  name: string | null;
  'created-at': string;
  subscription: { status: string; plan: string | null; 'current-period-end': string | null };
  /** absent from servers that predate the account lifecycle */
  'email-verified'?: boolean;
  /** log-in asks for a TOTP code; absent from servers without two-factor */
  'two-factor-enabled'?: boolean;
  /** a platform admin (ADMIN_EMAILS, verified): the admin pages are shown */
  'platform-admin'?: boolean;
  /** in a session a platform admin opened as this account: who acts (the banner says so) */
  'impersonated-by'?: { id: string; email: string };
  /** the account's picture; absent from servers without files */
  avatar?: ImageLinks | null;
  /** the account's language; null follows the browser (absent from servers without languages) */
  locale?: Locale | null;
}

/** The product as the server's configuration names it (PRODUCT_NAME, PRODUCT_PITCH), written into the page. */
export interface Product {
  name: string;
  pitch: string;
}

/** The page's hidden fields with the product's name and pitch (src/http/static.ts writes them). */
export const PRODUCT_NAME_FIELD = '__product-name';
export const PRODUCT_PITCH_FIELD = '__product-pitch';

/** A file upload of one control (shell/uploads.ts), by the control's id in `uploads`. */
export interface UploadState {
  /** starting: asked the server where to send; sending: the bytes go; completing: the server checks them */
  phase: 'starting' | 'sending' | 'completing' | 'done' | 'failed';
  /** the chosen file's name */
  name: string;
  /** bytes sent so far, of `total` */
  loaded: number;
  total: number;
  /** failed: why (the server's or the store's refusal) */
  message?: string;
}

export interface Toast {
  id: number;
  message: string;
  kind?: 'error' | 'info';
}

/** The shell's part of the state; features extend this interface with their slices. */
export interface ShellState {
  route: Route;
  product?: Product;
  token?: string;
  account?: Account;
  toasts: Toast[];
  busy: boolean;
  /** false until the start-up session check answered */
  ready: boolean;
  /** the language whose words are in use (docs/i18n.md) */
  locale: Locale;
  /** per form, per field: the message to show beside the field (the server's, or a client check's) */
  fieldErrors?: Record<string, Record<string, string>>;
  /**
   * A request that needs re-authentication, waiting for it: how (the password into `field`, or
   * a new sign-in), the request to send again, and its refusal (for its failure events on cancel)
   */
  reauth?: { method: 'password' | 'recent-sign-in'; field: string; request: HttpOptions; refusal: unknown };
  /** per form, how many times it succeeded: the form is keyed by it, so a success clears it */
  formResets?: Record<string, number>;
  /** per upload control, its upload under way or its outcome */
  uploads?: Record<string, UploadState>;
}

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface AppState extends ShellState {}
