/**
 * The sessions page: the account's live sessions (device, address, start, last use), each ended
 * on its own or every other one at once. It dispatches the events of account/sessions-events.ts.
 */
import { useApp } from '../ui/app.js';
import { Button } from '../ui/button.js';
import { Card } from '../ui/card.js';
import { ConfirmButton } from '../ui/dialog.js';
import { Badge } from '../ui/feedback.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { dateTime } from '../ui/dates.js';
import { t } from '../i18n/words.js';

export function SessionsPage() {
  const { state, dispatch } = useApp();
  const sessions = state.sessions;
  const ending = new Set(state.endingSessions);
  const others = (sessions ?? []).filter((s) => !s.current);
  return (
    <>
      <PageHeader
        title={t('Sessions')}
        description={t("Each log-in is a session. End the ones you don't recognise.")}
        actions={
          sessions && (
            <ConfirmButton
              id="end-other-sessions"
              variant="secondary"
              disabled={others.length === 0 || others.every((s) => ending.has(s.id))}
              title={t('End all other sessions?')}
              message={t('Every other device signed in to your account is signed out.')}
              confirmLabel={t('End them')}
              onConfirm={() => dispatch(['sessions/end-others'])}
            >
              {t('End all other sessions')}
            </ConfirmButton>
          )
        }
      />
      <Card>
        <Table
          id="sessions"
          caption={t('Your sessions')}
          headers={[t('Device'), t('Address'), t('Started'), t('Last used'), '']}
          rows={sessions}
          loadingText={t('Loading sessions…')}
          empty={t('No sessions.')}
          render={(s) => (
            <tr key={s.id} data-session={s.id} data-current={s.current ? 'true' : undefined}>
              <td data-field="user-agent" class="max-w-56 break-words">
                {s['user-agent'] ?? t('Unknown device')}
              </td>
              <td data-field="ip">{s.ip ?? '—'}</td>
              <td data-field="created-at">{dateTime(s['created-at'])}</td>
              <td data-field="last-used-at">{dateTime(s['last-used-at'])}</td>
              <td>
                {s.current ? (
                  <Badge tone="success">{t('This session')}</Badge>
                ) : (
                  <Button variant="secondary" class="end-session" disabled={ending.has(s.id)} onClick={() => dispatch(['sessions/end', s.id])}>
                    {t('End')}
                  </Button>
                )}
              </td>
            </tr>
          )}
        />
      </Card>
    </>
  );
}
