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

const KINDS: Array<{ value: StreamKind; label: string }> = [
  { value: 'https', label: 'HTTPS endpoint' },
  { value: 'splunk', label: 'Splunk HTTP Event Collector' },
  { value: 'datadog', label: 'Datadog' },
  { value: 's3', label: 'Amazon S3 or compatible' },
];

/** A kind's fields: name, label, input type, hint; `optional` ones may stay empty. */
type Spec = [name: string, label: string, type?: 'url' | 'password', hint?: string, optional?: boolean];
const FIELDS: Record<StreamKind, Spec[]> = {
  https: [['url', 'URL', 'url', 'Batches are POSTed there, signed per Standard Webhooks']],
  splunk: [
    ['url', 'URL', 'url', 'e.g. https://splunk.example.com:8088'],
    ['token', 'HEC token', 'password'],
  ],
  datadog: [
    ['site', 'Site', undefined, 'datadoghq.com, datadoghq.eu, us3.datadoghq.com, …, or an intake URL'],
    ['api-key', 'API key', 'password'],
  ],
  s3: [
    ['bucket', 'Bucket'],
    ['region', 'Region'],
    ['endpoint', 'Endpoint', 'url', 'R2, MinIO; empty for AWS', true],
    ['prefix', 'Key prefix', undefined, undefined, true],
    ['access-key-id', 'Access key ID'],
    ['secret-access-key', 'Secret access key', 'password'],
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
  const t = state.auditStreams!.tests[s.id];
  const how = t && `${t['status-code'] ?? 'no answer'} in ${t['duration-ms']} ms`;
  return (
    <li class="stream min-w-0" data-stream={s.id} data-status={s.status}>
      <Card id={`stream-${s.id}`} title={<code class="break-all">{dest}</code>} description={KINDS.find((k) => k.value === s.kind)?.label}>
        <DataList
          items={[
            ['Status', <Badge tone={paused ? (failing ? 'error' : 'warning') : 'success'}>{failing ? 'paused after failing' : s.status}</Badge>, 'status'],
            ['Waiting', `${s.lag} ${s.lag === 1 ? 'entry' : 'entries'}`, 'lag'],
            ['Last delivered', dateTime(s['last-delivered-at'], 'never'), 'last-delivered-at'],
            !!s['last-error'] && [
              'Last error',
              `${s['last-error']}${s['failing-since'] ? `, failing since ${dateTime(s['failing-since'])}` : ''}`,
              'last-error',
            ],
            ['Created', dateTime(s['created-at']), 'created-at'],
          ]}
        />
        {t === null ? (
          <Muted>Sending a test event…</Muted>
        ) : (
          t && (
            <Alert tone={t.delivered ? 'success' : 'error'} data-status={t.delivered ? 'delivered' : 'failed'}>
              {t.delivered ? `Test event delivered: ${how}` : `Test event not delivered: ${t.error} (${how})`}
            </Alert>
          )
        )}
        <Actions>
          <Button variant="secondary" class="test-stream" disabled={t === null} onClick={() => dispatch(['streams/act', s.id, 'test'])}>
            Send test
          </Button>
          <Button variant="secondary" class="toggle-stream" disabled={state.busy} onClick={() => dispatch(['streams/act', s.id, paused ? 'resume' : 'pause'])}>
            {paused ? 'Resume' : 'Pause'}
          </Button>
          <ConfirmButton
            class="delete-stream"
            disabled={state.busy}
            title={`Delete the stream to ${dest}?`}
            message="Nothing more is sent there. The entries stay in the log."
            confirmLabel="Delete stream"
            onConfirm={() => dispatch(['streams/act', s.id, 'delete'])}
          >
            Delete
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
    <Card title="Add a stream" id="create-stream-card">
      <Form id={STREAM_FORM} resetKey={state.auditStreams!.formResets} onSubmit={(fields) => dispatch(['streams/create', fields])}>
        <SelectField
          id="stream-kind"
          form={STREAM_FORM}
          name="kind"
          label="Destination"
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
              label={optional ? `${label} (optional)` : label}
              type={type}
              hint={hint}
              required={!optional}
              spellcheck={false}
              autoComplete="off"
            />
          ))}
          {kind === 's3' && <CheckboxField form={STREAM_FORM} name="force-path-style" label="Path-style addressing (MinIO)" />}
        </div>
        <Submit>Add stream</Submit>
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
  if (!id || page?.status === 'missing') return <OrgPageGate title="Audit log streams" missing />;
  const org = state.orgs?.find((o) => o.id === id);
  const header = (
    <PageHeader
      title={<>Audit log streams{org ? <> · {org.name}</> : null}</>}
      id="streams-title"
      back={
        <Link to="org-audit" path={auditPath(id)} id="streams-back">
          ← Audit log
        </Link>
      }
      description="Every entry, delivered in order to your SIEM or bucket as it is written."
      actions={
        page?.streams && (
          <Button id="streams-refresh" variant="secondary" onClick={() => dispatch(['streams/load', id])}>
            Refresh
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
          {page.status === 'forbidden' ? "Only the organization's admins and owners manage its audit log streams." : 'The streams could not be loaded.'}
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
            <p class="mb-2 font-medium">Copy the signing secret now: it is not shown again.</p>
            <div class="flex flex-wrap gap-2 sm:flex-nowrap">
              <CopyField id="stream-secret-value" label="The stream's signing secret" value={page.secret.value} />
              <Button id="copy-stream-secret" onClick={() => dispatch(['streams/copy-secret'])}>
                Copy
              </Button>
              <Button id="close-stream-secret" variant="secondary" onClick={() => dispatch(['streams/hide-secret'])}>
                Done
              </Button>
            </div>
          </Alert>
        )}
        {!page?.streams ? (
          <p class="text-sm text-muted" role="status">
            Loading streams…
          </p>
        ) : page.streams.length === 0 ? (
          <Card title="Streams" id="streams-card">
            <Muted id="no-streams">No streams yet.</Muted>
          </Card>
        ) : (
          <ul id="streams" aria-label="Streams" class="grid min-w-0 gap-4 sm:gap-6">
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
