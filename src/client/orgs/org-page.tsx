/**
 * What every page of an organization (`/orgs/<id>/...`) shows before its organization is known,
 * and its way back: one place for the "not a member" answer (404 and a missing organization look
 * the same), the loading line and the link to the organization.
 */
import { Link } from '../ui/app.js';
import { Alert } from '../ui/feedback.js';
import { PageHeader } from '../ui/page-header.js';
import { orgPath } from './events.js';
import { t } from '../i18n/words.js';

/** The page before its organization is there: `missing` (no such organization, or not a member), else loading. */
export function OrgPageGate({ title, missing }: { title: string; missing?: boolean }) {
  return (
    <>
      <PageHeader title={title} />
      {missing ? (
        <Alert id="org-missing" tone="error">
          {t('This organization does not exist, or you are not a member.')} <Link to="orgs">{t('Your organizations')}</Link>
        </Alert>
      ) : (
        <p class="text-sm text-muted" role="status">
          {t('Loading…')}
        </p>
      )}
    </>
  );
}

/** The link back to the organization's page, for the page header's `back`. */
export function BackToOrg({ org }: { org: { id: string; name: string } }) {
  return (
    <Link to="org" path={orgPath(org.id)} id="back-to-org">
      {t('← {name}', { name: org.name })}
    </Link>
  );
}
