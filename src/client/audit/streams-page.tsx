/**
 * The audit log streams page of an organization (`/orgs/<id>/audit-log/streams`, admins): each
 * stream with its destination, status, lag, last delivery and last error; send a test and see
 * whether it was delivered; pause, resume, delete (confirmed); a form to add one of each kind,
 * the server's field errors beside their fields, and an https stream's signing secret shown once
 * with a copy button. It reads the state and dispatches the events of streams-events.ts.
 */
import { useEffect, useState } from 'preact/hooks';
import { OrgPageGate } from '../orgs/org-page.js';
import { Link, useApp } from '../ui/app.js';
import { Button, Submit } from '../ui/button.js';
import { Actions, Card, DataList, Muted, Stack } from '../ui/card.js';
import { dateTime } from '../ui/dates.js';
import { ConfirmButton } from '../ui/dialog.js';
import { Alert, Badge } from '../ui/feedback.js';
import { CheckboxField, CopyField, Field, Form, SelectField } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { auditPath } from './events.js';
import { STREAM_FORM, streamsOrgIdOf, type AuditStream, type StreamKind } from './streams-events.js';
import { msg, t } from '../i18n/words.js';

const KINDS: Array<{ value: StreamKind; label: string }> = [
  { value: 'https', label: msg('HTTPS endpoint') },
  { value: 'splunk', label: msg('Splunk HTTP Event Collector') },
  { value: 'datadog', label: msg('Datadog') },
  { value: 's3', label: msg('Amazon S3 or compatible') },
];

/** A kind's fields: name, label, input type, hint; `optional` ones may stay empty. */
type Spec = [name: string, label: string, type?: 'url' | 'password', hint?: string, optional?: boolean];
const FIELDS: Record<StreamKind, Spec[]> = {
  https: [['url', msg('URL'), 'url', msg('Batches are POSTed there, signed per Standard Webhooks')]],
  splunk: [
    ['url', msg('URL'), 'url', msg('e.g. https://splunk.example.com:8088')],
    ['token', msg('HEC token'), 'password'],
  ],
  datadog: [
    ['site', msg('Site'), undefined, msg('datadoghq.com, datadoghq.eu, us3.datadoghq.com, …, or an intake URL')],
    ['api-key', msg('API key'), 'password'],
  ],
  s3: [
    ['bucket', msg('Bucket')],
    ['region', msg('Region')],
    ['endpoint', msg('Endpoint'), 'url', msg('R2, MinIO; empty for AWS'), true],
    ['prefix', msg('Key prefix'), undefined, undefined, true],
    ['access-key-id', msg('Access key ID')],
    ['secret-access-key', msg('Secret access key'), 'password'],
  ],
};

/** Where a stream sends, in a line. */
const destinationOf = (s: AuditStream) =>
  s.kind === 's3' ? `s3://${s.bucket}/${s.prefix ?? ''} (${s.region})` : ((s.kind === 'datadog' ? s.site : s.url) ?? '');

function Stream({ stream: s }: { stream: AuditStream }) {
  const { state, dispatch } = useApp();
  const dest = destinationOf(s);
  const paused = s.status === 'paused';
  const failing = s['paused-reason'] === 'failing';
  const test = state.auditStreams!.tests[s.id];
  const how =
    test &&
    (test['status-code'] === null
      ? t('no answer in {ms} ms', { ms: test['duration-ms'] })
      : t('{status} in {ms} ms', { status: test['status-code'], ms: test['duration-ms'] }));
  return (
    <li class="stream min-w-0" data-stream={s.id} data-status={s.status}>
      <Card id={`stream-${s.id}`} title={<code class="break-all">{dest}</code>} description={t(KINDS.find((k) => k.value === s.kind)?.label ?? s.kind)}>
        <DataList
          items={[
            [
              t('Status'),
              <Badge tone={paused ? (failing ? 'error' : 'warning') : 'success'}>
                {failing ? t('paused after failing') : paused ? t('paused') : t('active')}
              </Badge>,
              'status',
            ],
            [t('Waiting'), t('{count, plural, one {# entry} other {# entries}}', { count: s.lag }), 'lag'],
            [t('Last delivered'), dateTime(s['last-delivered-at'], t('never')), 'last-delivered-at'],
            !!s['last-error'] && [
              t('Last error'),
              s['failing-since'] ? t('{error}, failing since {since}', { error: s['last-error'] ?? '', since: dateTime(s['failing-since']) }) : s['last-error'],
              'last-error',
            ],
            [t('Created'), dateTime(s['created-at']), 'created-at'],
          ]}
        />
        {test === null ? (
          <Muted>{t('Sending a test event…')}</Muted>
        ) : (
          test && (
            <Alert tone={test.delivered ? 'success' : 'error'} data-status={test.delivered ? 'delivered' : 'failed'}>
              {test.delivered
                ? t('Test event delivered: {how}', { how: how || '' })
                : t('Test event not delivered: {error} ({how})', { error: test.error ?? '', how: how || '' })}
            </Alert>
          )
        )}
        <Actions>
          <Button variant="secondary" class="test-stream" disabled={test === null} onClick={() => dispatch(['streams/act', s.id, 'test'])}>
            {t('Send test')}
          </Button>
          <Button variant="secondary" class="toggle-stream" disabled={state.busy} onClick={() => dispatch(['streams/act', s.id, paused ? 'resume' : 'pause'])}>
            {paused ? t('Resume') : t('Pause')}
          </Button>
          <ConfirmButton
            class="delete-stream"
            disabled={state.busy}
            title={t('Delete the stream to {dest}?', { dest })}
            message={t('Nothing more is sent there. The entries stay in the log.')}
            confirmLabel={t('Delete stream')}
            onConfirm={() => dispatch(['streams/act', s.id, 'delete'])}
          >
            {t('Delete')}
          </ConfirmButton>
        </Actions>
      </Card>
    </li>
  );
}

function CreateForm() {
  const { state, dispatch } = useApp();
  const [kind, setKind] = useState<StreamKind>('https');
  return (
    <Card title={t('Add a stream')} id="create-stream-card">
      <Form id={STREAM_FORM} resetKey={state.auditStreams!.formResets} onSubmit={(fields) => dispatch(['streams/create', fields])}>
        <SelectField
          id="stream-kind"
          form={STREAM_FORM}
          name="kind"
          label={t('Destination')}
          value={kind}
          options={KINDS}
          onChange={(k) => setKind(k as StreamKind)}
        />
        {/* keyed by the kind: a field of another kind starts empty */}
        <div key={kind} class="space-y-4">
          {FIELDS[kind].map(([name, label, type, hint, optional]) => (
            <Field
              key={name}
              form={STREAM_FORM}
              name={name}
              label={optional ? t('{label} (optional)', { label: t(label) }) : t(label)}
              type={type}
              hint={hint && t(hint)}
              required={!optional}
              spellcheck={false}
              autoComplete="off"
            />
          ))}
          {kind === 's3' && <CheckboxField form={STREAM_FORM} name="force-path-style" label={t('Path-style addressing (MinIO)')} />}
        </div>
        <Submit>{t('Add stream')}</Submit>
      </Form>
    </Card>
  );
}

export function AuditStreamsPage() {
  const { state, dispatch } = useApp();
  const id = streamsOrgIdOf(location.pathname);
  const page = state.auditStreams?.orgId === id ? state.auditStreams : undefined;
  // each visit starts afresh (and forgets a secret shown on the last one)
  useEffect(() => {
    if (id) dispatch(['streams/open', id]);
  }, [id]);
  if (!id || page?.status === 'missing') return <OrgPageGate title={t('Audit log streams')} missing />;
  const org = state.orgs?.find((o) => o.id === id);
  const header = (
    <PageHeader
      title={
        <>
          {t('Audit log streams')}
          {org ? <> · {org.name}</> : null}
        </>
      }
      id="streams-title"
      back={
        <Link to="org-audit" path={auditPath(id)} id="streams-back">
          {t('← Audit log')}
        </Link>
      }
      description={t('Every entry, delivered in order to your SIEM or bucket as it is written.')}
      actions={
        page?.streams && (
          <Button id="streams-refresh" variant="secondary" onClick={() => dispatch(['streams/load', id])}>
            {t('Refresh')}
          </Button>
        )
      }
    />
  );
  if (page?.status === 'forbidden' || page?.status === 'failed') {
    return (
      <>
        {header}
        <Alert id="streams-unavailable" tone="error">
          {page.status === 'forbidden' ? t("Only the organization's admins and owners manage its audit log streams.") : t('The streams could not be loaded.')}
        </Alert>
      </>
    );
  }
  return (
    <>
      {header}
      <Stack>
        {page?.secret && (
          // the new https stream's signing secret, once
          <Alert id="stream-secret" tone="warning">
            <p class="mb-2 font-medium">{t('Copy the signing secret now: it is not shown again.')}</p>
            <div class="flex flex-wrap gap-2 sm:flex-nowrap">
              <CopyField id="stream-secret-value" label={t("The stream's signing secret")} value={page.secret.value} />
              <Button id="copy-stream-secret" onClick={() => dispatch(['streams/copy-secret'])}>
                {t('Copy')}
              </Button>
              <Button id="close-stream-secret" variant="secondary" onClick={() => dispatch(['streams/hide-secret'])}>
                {t('Done')}
              </Button>
            </div>
          </Alert>
        )}
        {!page?.streams ? (
          <p class="text-sm text-muted" role="status">
            {t('Loading streams…')}
          </p>
        ) : page.streams.length === 0 ? (
          <Card title={t('Streams')} id="streams-card">
            <Muted id="no-streams">{t('No streams yet.')}</Muted>
          </Card>
        ) : (
          <ul id="streams" aria-label={t('Streams')} class="grid min-w-0 gap-4 sm:gap-6">
            {page.streams.map((s) => (
              <Stream key={s.id} stream={s} />
            ))}
          </ul>
        )}
        {page?.streams && <CreateForm />}
      </Stack>
    </>
  );
}
