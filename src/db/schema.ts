/** Table types for Kysely; the migrations in `migrations/` create exactly these. */
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type SubscriptionStatus = 'none' | 'trialing' | 'active' | 'past-due' | 'canceled';

export interface AccountTable {
  id: Generated<string>;
  email: string;
  name: string | null;
  /** the account's avatar (migration 0026) */
  avatar_file_id: Generated<string | null>;
  /** null for an account made by a provider sign-in until its owner sets a password (forgot-password) */
  password_hash: string | null;
  created_at: Generated<Date>;
  /** a copy of the personal organization's subscription, kept by a trigger (migration 0009): never written here */
  subscription_status: ColumnType<SubscriptionStatus, SubscriptionStatus | undefined, SubscriptionStatus>;
  subscription_plan: string | null;
  subscription_period_end: NullableTimestamp;
  /** set when the owner opened a verification (or email-change) link sent to `email` */
  email_verified: ColumnType<boolean, boolean | undefined, boolean>;
  /** log-in asks for a TOTP code (or a backup code) after the password (migration 0011) */
  two_factor_enabled: ColumnType<boolean, boolean | undefined, boolean>;
  /** set while a platform admin has locked the account: no session starts (migration 0016) */
  locked_at: NullableTimestamp;
  locked_reason: string | null;
  /** the admin who locked it */
  locked_by: string | null;
  /** the account's language, a supported locale, or null: it follows the browser (migration 0029) */
  locale: Generated<string | null>;
}

/** A later word of an account's name and the rest of the name from it, lower-cased; kept by triggers (migration 0019): never written here. */
export interface AccountNameTailTable {
  tail: string;
  account_id: string;
}

/** One log-in: every refresh token rotated from it belongs to this family. */
export interface RefreshFamilyTable {
  id: Generated<string>;
  /** null once the account is deleted: the revoked family stays so every instance keeps refusing its access tokens */
  account_id: string | null;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
  /** the log-in's User-Agent, truncated; shown on the sessions page */
  user_agent: string | null;
  /** the client address of the log-in */
  ip: string | null;
  /** the last log-in or refresh of the family */
  last_used_at: NullableTimestamp;
  /** the platform admin acting in an impersonated session (its access tokens' `act`); null for the account's own */
  actor_account_id: ColumnType<string | null, string | null | undefined, never>;
}

export type ActionTokenPurpose = 'verify-email' | 'reset-password' | 'email-change' | 'invitation';

/** A single-use emailed token (verification, reset, email change); only its hash is stored. */
export interface ActionTokenTable {
  id: Generated<string>;
  purpose: ActionTokenPurpose;
  /** SHA-256 of the token, hex */
  token_hash: string;
  account_id: string;
  /** the address the link was sent to (for email-change: the new address) */
  email: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

export interface RefreshTokenTable {
  id: Generated<string>;
  family_id: string;
  /** SHA-256 of the token, hex; the token itself is never stored */
  token_hash: string;
  /** the token encrypted with a key derived from the server secret (AES-256-GCM), so the
   * family's current token can be answered again inside the reuse grace window */
  token_sealed: string;
  created_at: Generated<Date>;
  /** set when this token was exchanged for its successor */
  rotated_at: NullableTimestamp;
  replaced_by: string | null;
}

export interface PaymentEventTable {
  provider: string;
  event_id: string;
  type: string;
  /** the personal organization's account, for the account's own payment events (export, `payments/events`) */
  account_id: string | null;
  /** the organization the event concerns, once known */
  organization_id: string | null;
  /** the provider's customer the event concerns, when it names one */
  customer_id: string | null;
  /** the subscription a subscription or invoice event concerns: out-of-order events are judged per subscription */
  subscription_id: string | null;
  payload: ColumnType<unknown, string, string>;
  created_at: Timestamp;
  received_at: Generated<Date>;
  /** monotonic order for cursor pagination */
  seq: Generated<string>;
  /** the event ends its subscription for good (canceled, incomplete_expired): no later event revives it (migration 0023) */
  final: Generated<boolean>;
}

export type MailStatus = 'pending' | 'sending' | 'sent' | 'failed';

/** One message of the outbox (src/mail/): rendered when queued, delivered by the worker. */
export interface MailOutboxTable {
  id: Generated<string>;
  kind: string;
  to_address: string;
  from_address: string;
  subject: string;
  /** null once delivered over SMTP (the bodies carry live tokens) */
  html_body: string | null;
  text_body: string | null;
  status: ColumnType<MailStatus, MailStatus | undefined, MailStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** while `sending`: the instance in `locked_by` owns the message until then */
  locked_until: NullableTimestamp;
  locked_by: string | null;
  /** the last delivery failure, without secrets */
  last_error: string | null;
  created_at: Generated<Date>;
  sent_at: NullableTimestamp;
  /** headers of the message: List-Unsubscribe (migration 0027) */
  headers: ColumnType<Record<string, string> | null, string | null | undefined, string | null>;
}

export type OrgRole = 'owner' | 'admin' | 'member';

/** A workspace; every account has a personal one (`personal_account_id`) and may belong to shared ones. */
export interface OrganizationTable {
  id: Generated<string>;
  name: string;
  /** the organization's logo (migration 0026) */
  logo_file_id: Generated<string | null>;
  /** unique, `[a-z0-9-]`, for URLs */
  slug: string;
  personal: ColumnType<boolean, boolean | undefined, boolean>;
  /** the account whose personal organization this is; null for a shared one */
  personal_account_id: string | null;
  created_at: Generated<Date>;
  subscription_status: ColumnType<SubscriptionStatus, SubscriptionStatus | undefined, SubscriptionStatus>;
  subscription_plan: string | null;
  subscription_period_end: NullableTimestamp;
  /** the subscription ends when the current period does (canceled in the portal, not yet over) */
  subscription_cancel_at_period_end: ColumnType<boolean, boolean | undefined, boolean>;
  /** the Stripe customer paying for the organization (unique), set when a checkout completes */
  billing_customer_id: string | null;
  /** the organization's current Stripe subscription */
  billing_subscription_id: string | null;
  /** the subscription's items as its events report them (migration 0021) */
  subscription_items: ColumnType<SubscriptionItem[], string | undefined, string>;
  subscription_period_start: NullableTimestamp;
  /** the seat quantity the Stripe sync last gave Stripe */
  seat_quantity_sent: ColumnType<number | null, number | null | undefined, number | null>;
}

/** One item of a subscription: its id (`si_…`), price and quantity. */
export interface SubscriptionItem {
  id: string;
  price: string;
  quantity: number | null;
}

/** The Stripe sync outbox (migration 0021): seat quantities and meter events, per organization in `id` order. */
export interface BillingJobTable {
  id: Generated<string>;
  organization_id: string;
  kind: 'seats' | 'meter' | 'subscription';
  meter: string | null;
  /** a `subscription` job's subscription, re-read from Stripe (migration 0023) */
  subscription_id: string | null;
  status: ColumnType<'pending' | 'sent' | 'skipped', 'pending' | 'sent' | 'skipped' | undefined, 'pending' | 'sent' | 'skipped'>;
  idempotency_key: string | null;
  quantity: number | null;
  value: string | null;
  event_at: NullableTimestamp;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  locked_until: NullableTimestamp;
  locked_by: string | null;
  last_error: string | null;
  created_at: Generated<Date>;
  sent_at: NullableTimestamp;
}

/** What a service recorded with `usage.record` (migration 0021). */
export interface UsageRecordTable {
  organization_id: string;
  meter: string;
  id: string;
  quantity: ColumnType<string, number | string, number | string>;
  recorded_at: Generated<Date>;
  job_id: string | null;
  /** decided at recording: the organization had a customer and a metered price for the meter (migration 0022) */
  billable: Generated<boolean>;
}

/** An organization's usage of a meter in one billing period (migration 0021). */
export interface UsageCounterTable {
  organization_id: string;
  meter: string;
  period_start: Timestamp;
  used: ColumnType<string, number | string | undefined, number | string>;
  soft_notified: Generated<boolean>;
}

/** An account's role in an organization; at least one owner per organization (checked at commit). */
export interface MembershipTable {
  organization_id: string;
  account_id: string;
  role: OrgRole;
  joined_at: Generated<Date>;
  /** set while a directory (SCIM `active: false`) suspends the membership: it grants nothing */
  suspended_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** the directory's id of the user (SCIM `externalId`) */
  scim_external_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** An emailed invitation; pending while neither accepted nor revoked (one pending per organization and address). */
export interface InvitationTable {
  id: Generated<string>;
  organization_id: string;
  /** lower-cased */
  email: string;
  role: OrgRole;
  /** SHA-256 of the link's token, hex */
  token_hash: string;
  invited_by: string | null;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  accepted_at: NullableTimestamp;
  accepted_by: string | null;
  revoked_at: NullableTimestamp;
}

/** One audit log entry; append-only (a trigger refuses updates, migration 0008). */
export interface AuditEntryTable {
  /** bigint identity: newest first, and the cursor */
  id: Generated<string>;
  organization_id: string | null;
  account_id: string | null;
  actor_account_id: string | null;
  actor_api_key_id: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: ColumnType<AuditDetails, string | undefined, never>;
  created_at: Generated<Date>;
  /** the account an impersonated session acted as; the actor is then the platform admin (migration 0016) */
  impersonated_account_id: ColumnType<string | null, string | null | undefined, never>;
  /** shown in the admin audit log: an admin action, or a change made in an impersonated session */
  admin_log: ColumnType<boolean, boolean | undefined, never>;
}

export type AuditStreamKind = 'https' | 'splunk' | 'datadog' | 's3';

/** A destination of an organization's audit log (migration 0028; src/audit-streams/). */
export interface AuditStreamTable {
  id: Generated<string>;
  organization_id: string;
  kind: AuditStreamKind;
  /** the kind's settings that are not secret (url, site, bucket, region, endpoint, force-path-style, prefix) */
  settings: ColumnType<Record<string, string | boolean>, string, string>;
  /** the kind's credentials as sealed JSON (SecretBox, bound to the stream's id) */
  credentials_sealed: string;
  status: ColumnType<'active' | 'paused', 'active' | 'paused' | undefined, 'active' | 'paused'>;
  paused_reason: 'manual' | 'failing' | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  last_delivered_at: Date | null;
  delivered_count: ColumnType<string, never, string>;
  last_error: string | null;
  last_error_at: Date | null;
  failing_since: Date | null;
  /** the batch in flight: its entries carry this id until it is accepted */
  batch_id: string | null;
  attempt_count: Generated<number>;
  next_attempt_at: Generated<Date>;
  locked_until: Date | null;
  locked_by: string | null;
}

/** An entry a stream still owes (written by the audit_entry trigger; deleted once delivered). */
export interface AuditStreamEntryTable {
  stream_id: string;
  entry_id: string;
  batch_id: string | null;
}

/** An account's TOTP secret: pending until `enabled_at`; one per account. */
export interface TotpCredentialTable {
  account_id: string;
  /** the base32 secret sealed with ENCRYPTION_KEY (AES-256-GCM, the account id as associated data) */
  secret_sealed: string;
  created_at: Generated<Date>;
  enabled_at: NullableTimestamp;
  /** the time step of the last code accepted: a code of that step or an earlier one is refused (bigint: a string) */
  last_used_step: ColumnType<string | null, string | number | null | undefined, string | number | null>;
}

/** A single-use recovery code; HMAC-SHA-256 keyed from ENCRYPTION_KEY, hex. */
export interface BackupCodeTable {
  id: Generated<string>;
  account_id: string;
  code_hash: string;
  created_at: Generated<Date>;
  used_at: NullableTimestamp;
}

/** A password log-in waiting for its second factor: the `mfa-token`'s SHA-256, single-use. */
export interface MfaLoginTable {
  id: Generated<string>;
  account_id: string;
  token_hash: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  /** wrong codes given with this token; past the limit it is spent */
  failures: ColumnType<number, number | undefined, number>;
}

/** An emailed sign-in (link and code) to an address, single-use, 15 minutes (migration 0017). */
export interface EmailSignInTable {
  id: Generated<string>;
  /** normalised; the account is looked up (or made) by it when the sign-in is used */
  email: string;
  token_hash: string;
  code_hash: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  /** wrong codes given for it; the fifth voids it */
  failures: ColumnType<number, number | undefined, number>;
}

/** A browser an account has signed in from: its device cookie's id (migration 0017). */
export interface AccountDeviceTable {
  account_id: string;
  device_id: string;
  first_seen_at: Generated<Date>;
  last_seen_at: ColumnType<Date, Date | undefined, Date>;
}

/** A WebAuthn credential (passkey) of an account. */
export interface PasskeyTable {
  id: Generated<string>;
  account_id: string;
  /** base64url */
  credential_id: string;
  /** COSE public key, base64url */
  public_key: string;
  /** the authenticator's signature counter (bigint: a string) */
  counter: ColumnType<string, string | number | undefined, string | number>;
  /** comma-separated AuthenticatorTransport values */
  transports: ColumnType<string, string | undefined, string>;
  /** `singleDevice` or `multiDevice` (synced) */
  device_type: string;
  backed_up: boolean;
  name: string;
  created_at: Generated<Date>;
  last_used_at: NullableTimestamp;
}

/** An account's identity at an OpenID Connect / OAuth 2 provider (src/oidc/); found by (provider, subject). */
export interface AccountIdentityTable {
  id: Generated<string>;
  account_id: string;
  /** the provider's name in OIDC_PROVIDERS */
  provider: string;
  /** the provider's stable id of the person (`sub`; GitHub: the numeric user id) */
  subject: string;
  /** the provider's verified address, lower-cased, as last seen; null when it asserted none */
  email: string | null;
  created_at: Generated<Date>;
  last_used_at: NullableTimestamp;
}

export type WebAuthnPurpose = 'registration' | 'authentication';

/** A registration or sign-in ceremony's challenge: single-use, short-lived. */
export interface WebAuthnChallengeTable {
  id: Generated<string>;
  purpose: WebAuthnPurpose;
  account_id: string | null;
  /** base64url, as the options carry it */
  challenge: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
}

/** An organization's API key; the key itself is never stored, only its SHA-256 (migration 0010). */
export interface ApiKeyTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  /** never `owner` */
  role: 'admin' | 'member';
  /** the key's non-secret part (`sk_<prefix>_…`), for lists and logs */
  prefix: string;
  /** SHA-256 of the whole key, hex */
  secret_hash: string;
  created_by: string | null;
  created_at: Generated<Date>;
  /** written at most once a minute per key */
  last_used_at: NullableTimestamp;
  /** set once; a key row is never deleted by the application */
  revoked_at: NullableTimestamp;
  revoked_by: string | null;
}

/** An organization's webhook receiver (migration 0015; src/webhooks/). */
export interface WebhookEndpointTable {
  /** made by the application: the secret is sealed with the id as associated data before the insert */
  id: string;
  organization_id: string;
  url: string;
  description: ColumnType<string, string | undefined, string>;
  /** event types, or `['*']` */
  events: string[];
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  /** `failing` when the worker disabled it; null otherwise */
  disabled_reason: 'failing' | null;
  /** `whsec_…` sealed with ENCRYPTION_KEY (the endpoint id as associated data) */
  secret_sealed: string;
  /** the secret before the last rotation: it signs too until `previous_secret_expires_at` */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: NullableTimestamp;
  /** the first failed attempt since the last success */
  failing_since: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** One event for an organization's endpoints; `id` (`msg_…`) is the `webhook-id` header. */
export interface WebhookMessageTable {
  id: Generated<string>;
  organization_id: string;
  type: string;
  /** the exact body sent */
  payload: string;
  created_at: Generated<Date>;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** A message for one endpoint, with its retries. */
export interface WebhookDeliveryTable {
  id: Generated<string>;
  /** bigint identity: the log's order and cursor */
  seq: Generated<string>;
  message_id: string;
  endpoint_id: string;
  status: ColumnType<WebhookDeliveryStatus, WebhookDeliveryStatus | undefined, WebhookDeliveryStatus>;
  attempt_count: ColumnType<number, number | undefined, number>;
  /** the next attempt was asked for by hand: its failure ends the delivery */
  manual: ColumnType<boolean, boolean | undefined, boolean>;
  /** set exactly while pending */
  next_attempt_at: NullableTimestamp;
  locked_until: NullableTimestamp;
  locked_by: string | null;
  created_at: Generated<Date>;
  completed_at: NullableTimestamp;
}

/** One HTTP attempt of a delivery. */
export interface WebhookAttemptTable {
  id: Generated<string>;
  delivery_id: string;
  at: Timestamp;
  /** null when no response came (timeout, refused address, connection error) */
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  /** the first 4 KiB of the response body */
  response: string | null;
}

/** A domain an organization claims; verified by a DNS TXT record (one organization per verified domain). */
export interface OrgDomainTable {
  id: Generated<string>;
  organization_id: string;
  /** lower-case */
  domain: string;
  txt_value: string;
  verified_at: NullableTimestamp;
  created_at: Generated<Date>;
}

/** An organization's SAML identity provider, from its pasted metadata. */
export interface SamlConnectionTable {
  organization_id: string;
  metadata_xml: string;
  idp_entity_id: string;
  idp_sso_url: string;
  /** base64 DER signing certificates */
  idp_certificates: string[];
  certificate_expires_at: Timestamp;
  default_role: 'member' | 'admin';
  enforced: ColumnType<boolean, boolean | undefined, boolean>;
  expiry_warned_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** An AuthnRequest we sent, live until answered or expired. */
export interface SamlRequestTable {
  id: string;
  organization_id: string;
  expires_at: Timestamp;
}

/** An assertion id already accepted (replay guard), kept until after it expires. */
export interface SamlAssertionTable {
  organization_id: string;
  id: string;
  expires_at: Timestamp;
}

/** A directory's SCIM bearer token (hash only). */
export interface ScimTokenTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  default_role: 'member' | 'admin';
  /** SHA-256 of the token, hex */
  token_hash: string;
  created_at: Generated<Date>;
  last_used_at: NullableTimestamp;
}

/** A signing key (migration 0020; src/auth/signing-keys.ts): the private JWK sealed with ENCRYPTION_KEY. */
export interface SigningKeyTable {
  kid: string;
  alg: 'EdDSA' | 'RS256' | 'ES256';
  public_jwk: ColumnType<JsonWebKey, string, string>;
  private_sealed: string;
  created_at: Generated<Date>;
  active_from: Timestamp;
  /** what it signs (migration 0024): access tokens, or the provider's ID tokens */
  purpose: ColumnType<'access' | 'id-token', 'access' | 'id-token' | undefined, never>;
}

/** An organization's OAuth app (src/oauth/). */
export interface OAuthAppTable {
  id: Generated<string>;
  organization_id: string;
  client_id: string;
  name: string;
  redirect_uris: string[];
  confidential: boolean;
  scopes: string[];
  /** SHA-256 of the client secret, hex; null for a public app */
  secret_hash: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** What oidc-provider stores, by model and id (src/oauth/adapter.ts). */
export interface OAuthModelTable {
  model: string;
  id: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  grant_id: string | null;
  uid: string | null;
  expires_at: NullableTimestamp;
  consumed_at: NullableTimestamp;
  /** a `Session`'s product session (refresh family) whose sign-in made it (migration 0024) */
  session_id: string | null;
}

/** Why a grant ended (src/oauth/grants.ts). */
export type GrantEndReason = 'account' | 'app-deleted' | 'refresh-token-reuse' | 'expired' | 'session-ended' | 'password-changed' | 'organization-deleted';

/** A person's grant to an app: a connected app (src/oauth/grants.ts). */
export interface OAuthGrantTable {
  id: string;
  account_id: string;
  client_id: string;
  scopes: string[];
  created_at: Generated<Date>;
  last_used_at: NullableTimestamp;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
  revoked_reason: GrantEndReason | null;
  /** the product session (refresh family) that consented (migration 0024): ending it ends the grant */
  session_id: string | null;
  /** the resources (RFC 8707) it reaches, `APP_URL/api` and/or `APP_URL/mcp` (migration 0025) */
  resources: Generated<string[]>;
  /** the name a Client ID Metadata Document gave its client at the grant (migration 0025) */
  client_name: string | null;
}

/** Facts an entry records beyond its columns: small, flat, never a secret. */
export type AuditDetails = Record<string, string | number | boolean | null>;

export interface DatabaseSchema {
  account_identity: AccountIdentityTable;
  audit_entry: AuditEntryTable;
  audit_stream: AuditStreamTable;
  audit_stream_entry: AuditStreamEntryTable;
  api_key: ApiKeyTable;
  organization: OrganizationTable;
  membership: MembershipTable;
  invitation: InvitationTable;
  account: AccountTable;
  account_name_tail: AccountNameTailTable;
  refresh_family: RefreshFamilyTable;
  action_token: ActionTokenTable;
  refresh_token: RefreshTokenTable;
  payment_event: PaymentEventTable;
  mail_outbox: MailOutboxTable;
  totp_credential: TotpCredentialTable;
  backup_code: BackupCodeTable;
  mfa_login: MfaLoginTable;
  email_sign_in: EmailSignInTable;
  account_device: AccountDeviceTable;
  passkey: PasskeyTable;
  webauthn_challenge: WebAuthnChallengeTable;
  webhook_endpoint: WebhookEndpointTable;
  webhook_message: WebhookMessageTable;
  webhook_delivery: WebhookDeliveryTable;
  webhook_attempt: WebhookAttemptTable;
  org_domain: OrgDomainTable;
  saml_connection: SamlConnectionTable;
  saml_request: SamlRequestTable;
  saml_assertion: SamlAssertionTable;
  scim_token: ScimTokenTable;
  signing_key: SigningKeyTable;
  oauth_app: OAuthAppTable;
  oauth_model: OAuthModelTable;
  oauth_grant: OAuthGrantTable;
  billing_job: BillingJobTable;
  usage_record: UsageRecordTable;
  usage_counter: UsageCounterTable;
  stored_file: StoredFileTable;
  storage_deletion: StorageDeletionTable;
  notification: NotificationTable;
  notification_preference: NotificationPreferenceTable;
  organization_notification_default: OrganizationNotificationDefaultTable;
  notification_digest_run: NotificationDigestRunTable;
  notification_stream: NotificationStreamTable;
}

export type EmailChoice = 'immediately' | 'daily' | 'off';

/** One account's notification (migration 0027; docs/notifications.md). */
export interface NotificationTable {
  id: Generated<string>;
  /** the stream's cursor */
  seq: ColumnType<string, never, never>;
  account_id: string;
  organization_id: string | null;
  kind: string;
  category: string;
  title: string;
  body: string;
  url: string | null;
  in_app: Generated<boolean>;
  digest: Generated<boolean>;
  created_at: Generated<Date>;
  read_at: NullableTimestamp;
}

export interface NotificationPreferenceTable {
  account_id: string;
  category: string;
  in_app: boolean | null;
  email: EmailChoice | null;
}

export interface OrganizationNotificationDefaultTable {
  organization_id: string;
  category: string;
  in_app: boolean | null;
  email: EmailChoice | null;
}

export interface NotificationDigestRunTable {
  day: string;
  ran_at: Generated<Date>;
}

export interface NotificationStreamTable {
  id: string;
  account_id: string;
  expires_at: Date;
}

/** An object in the store and what it belongs to (migration 0026; docs/files.md). */
export interface StoredFileTable {
  id: Generated<string>;
  key: string;
  purpose: string;
  account_id: string | null;
  organization_id: string | null;
  uploaded_by: string | null;
  name: string;
  content_type: string;
  /** bytes: declared while pending, as stored once completed */
  size: ColumnType<string, number, number>;
  status: Generated<'pending' | 'stored'>;
  /** the widths of the WebP renditions kept beside an image (`<key>.<width>.webp`) */
  renditions: Generated<number[]>;
  /** the disk driver's upload token was used (single use) */
  upload_used: Generated<boolean>;
  created_at: Generated<Date>;
  completed_at: NullableTimestamp;
}

/** Objects to delete from the store (a durable queue; migration 0026). */
export interface StorageDeletionTable {
  id: Generated<string>;
  key: string;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  locked_until: NullableTimestamp;
  locked_by: string | null;
  last_error: string | null;
  created_at: Generated<Date>;
}

export type AccountRow = Selectable<AccountTable>;
export type NewAccount = Insertable<AccountTable>;
