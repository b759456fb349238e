/**
 * The preferences grid (categories × channels: an in-app switch, an email choice) on the account's
 * settings (`/settings/notifications`) and, for an organization's admins, its members' defaults
 * (`/orgs/<id>/notifications`). A critical category's controls are fixed, with a note saying why.
 * The outcome of a save shows above the grid: success, or the server's refusal in its words.
 */
import { useEffect } from 'preact/hooks';
import { BackToOrg, OrgPageGate } from '../orgs/org-page.js';
import { useApp } from '../ui/app.js';
import { Button, Submit } from '../ui/button.js';
import { Actions, Card } from '../ui/card.js';
import { Alert } from '../ui/feedback.js';
import { Form, SelectField } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Switch } from '../ui/switch.js';
import { msg, t } from '../i18n/words.js';
import { listText } from '../ui/dates.js';
import { categoryName } from './category-words.js';
import {
  ACCOUNT_OWNER,
  type CategoryPreference,
  emailField,
  inAppField,
  type NotificationPreferencesState,
  orgNotificationsIdOf,
} from './preferences-events.js';

const EMAIL_CHOICES = [
  { value: 'immediately', label: msg('Immediately') },
  { value: 'daily', label: msg('Daily digest') },
  { value: 'off', label: msg('Off') },
];

type Prefs = NonNullable<NotificationPreferencesState['notificationPreferences']>;

function Row({ c }: { c: CategoryPreference }) {
  const fixed = c.critical ? `pref-fixed-${c.category}` : undefined;
  return (
    <tr data-category={c.category} data-critical={c.critical ? 'true' : 'false'} class="border-b border-line">
      <th scope="row" class="py-3 pe-2 text-start align-middle font-medium">
        {categoryName(c)}
        {fixed && (
          <small id={fixed} class="block text-xs font-normal text-muted">
            {t('Always shown and emailed immediately')}
          </small>
        )}
      </th>
      <td class="px-2 py-3 align-middle">
        <Switch
          id={`pref-in-app-${c.category}`}
          name={inAppField(c.category)}
          label={t('{name} in the app', { name: categoryName(c) })}
          defaultChecked={c['in-app']}
          disabled={c.critical}
          describedBy={fixed}
        />
      </td>
      <td class="py-3 ps-2 align-middle">
        {/* wide enough for "Daily digest" on a phone: the category's name wraps first */}
        <div class="min-w-38">
          <SelectField
            id={`pref-email-${c.category}`}
            name={emailField(c.category)}
            label={t('{name} by email', { name: categoryName(c) })}
            srOnlyLabel
            options={EMAIL_CHOICES}
            defaultValue={c.email}
            disabled={c.critical}
          />
        </div>
      </td>
    </tr>
  );
}

/** Categories × channels: three narrow columns, so it fits a phone without scrolling (the shared Table is for wider ones). */
function Grid({ categories, caption }: { categories: CategoryPreference[]; caption: string }) {
  return (
    <table id="preference-grid" class="w-full border-collapse text-start text-sm">
      <caption class="sr-only">{caption}</caption>
      <thead>
        <tr class="border-b border-line text-muted">
          <th scope="col" class="py-2 pe-2 font-medium">
            {t('Category')}
          </th>
          <th scope="col" class="px-2 py-2 font-medium">
            {t('In the app')}
          </th>
          <th scope="col" class="py-2 ps-2 font-medium">
            {t('Email')}
          </th>
        </tr>
      </thead>
      <tbody>
        {categories.map((c) => (
          <Row key={c.category} c={c} />
        ))}
      </tbody>
    </table>
  );
}

/** The grid as a form: Save sends what changed; "Use the defaults" sends every category back to its default. */
function PreferencesGrid({ prefs, caption }: { prefs: Prefs; caption: string }) {
  const { state, dispatch } = useApp();
  const critical = (prefs.categories ?? []).filter((c) => c.critical).map(categoryName);
  return (
    <>
      {/* outside the form, which a save re-keys: the outcome stays the same element */}
      {prefs.notice && (
        <Alert id="preferences-notice" tone={prefs.notice.tone} data-status={prefs.notice.tone}>
          {prefs.notice.text}
        </Alert>
      )}
      <Form id="notification-preferences" resetKey={prefs.loads} onSubmit={(fields) => dispatch(['notification-preferences/save', prefs.owner, fields])}>
        {prefs.categories ? (
          <Grid categories={prefs.categories} caption={caption} />
        ) : (
          <p class="text-sm text-muted" role="status">
            {t('Loading preferences…')}
          </p>
        )}
        {critical.length > 0 && (
          <p id="critical-note" class="text-sm text-muted">
            {t(
              '{count, plural, one {{kinds} is critical: always shown and emailed immediately, so it cannot be turned off.} other {{kinds} are critical: always shown and emailed immediately, so they cannot be turned off.}}',
              { count: critical.length, kinds: listText(critical, 'conjunction') },
            )}
          </p>
        )}
        {prefs.categories && (
          <Actions>
            <Submit id="save-preferences">{t('Save')}</Submit>
            <Button id="reset-preferences" variant="secondary" disabled={state.busy} onClick={() => dispatch(['notification-preferences/reset', prefs.owner])}>
              {t('Use the defaults')}
            </Button>
          </Actions>
        )}
      </Form>
    </>
  );
}

/** The account's own preferences. */
export function NotificationPreferencesPage() {
  const { state, dispatch } = useApp();
  useEffect(() => {
    dispatch(['notification-preferences/open', ACCOUNT_OWNER]);
  }, []);
  const prefs = state.notificationPreferences?.owner === ACCOUNT_OWNER ? state.notificationPreferences : undefined;
  return (
    <>
      <PageHeader
        title={t('Notification preferences')}
        description={t(
          'For each kind of notification: whether it shows here in the app, and whether it is emailed at once, gathered into one email a day, or not at all.',
        )}
      />
      <Card
        title={t('Channels')}
        id="notification-preferences-card"
        description={t("For an organization's notifications, a kind you have not chosen follows the defaults its admins set.")}
      >
        {prefs ? (
          <PreferencesGrid prefs={prefs} caption={t('Your notification preferences')} />
        ) : (
          <p class="text-sm text-muted" role="status">
            {t('Loading preferences…')}
          </p>
        )}
      </Card>
    </>
  );
}

/** An organization's defaults for its members (admins and owners). */
export function OrgNotificationDefaultsPage() {
  const { state, dispatch } = useApp();
  const id = orgNotificationsIdOf(location.pathname);
  useEffect(() => {
    if (id) dispatch(['notification-preferences/open', id]);
  }, [id]);
  const prefs = id && state.notificationPreferences?.owner === id ? state.notificationPreferences : undefined;
  const title = t('Notification defaults');
  if (!id || prefs?.status === 'missing') return <OrgPageGate title={title} missing />;
  if (!prefs?.org) return <OrgPageGate title={title} />;
  const org = prefs.org;
  const back = <BackToOrg org={org} />;
  if (org.role === 'member')
    return (
      <>
        <PageHeader title={title} back={back} />
        <Alert id="notification-defaults-forbidden" tone="error">
          {t('Only admins and owners set the notification defaults of {name}.', { name: org.name })}
        </Alert>
      </>
    );
  return (
    <>
      <PageHeader
        title={t('{title} of {name}', { title, name: org.name })}
        id="notification-defaults-title"
        back={back}
        description={t("What members get for {name}'s notifications until they choose for themselves in their own preferences.", { name: org.name })}
      />
      <Card title={t("Members' defaults")} id="notification-defaults-card">
        <PreferencesGrid prefs={prefs} caption={t('Notification defaults of {name}', { name: org.name })} />
      </Card>
    </>
  );
}
