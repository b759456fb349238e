/**
 * The usage page of an organization (any member): seats used of included and max, and per
 * meter its use in the billing period against the plan's soft and hard limits, with a chart of
 * each day's use in inline SVG (no chart library: the bundle budget). The chart is an image
 * with a text alternative; the numbers it draws are also in the list beside it.
 */
import { useEffect } from 'preact/hooks';
import { billingPath } from '../billing/events.js';
import { orgPath } from '../orgs/events.js';
import { Link, useApp } from '../ui/app.js';
import { Card, DataList, Muted, Stack } from '../ui/card.js';
import { Alert, Badge } from '../ui/feedback.js';
import { PageHeader } from '../ui/page-header.js';
import { type MeterUsage, usageOrgIdOf } from './events.js';
import { t } from '../i18n/words.js';
import { dateOnly, numberText } from '../ui/dates.js';

const count = (n: number | null) => (n === null ? t('none') : numberText(n));

/** Bars of each day's use; the hard limit's daily share is not meaningful, so the chart shows the days alone. */
function DailyChart({ meter }: { meter: MeterUsage }) {
  const days = meter.daily;
  const width = 600;
  const height = 120;
  const top = Math.max(1, ...days.map((d) => d.used));
  const bar = width / Math.max(1, days.length);
  const total = days.reduce((n, d) => n + d.used, 0);
  const busiest = days.reduce((best, d) => (d.used > best.used ? d : best), days[0] ?? { date: '', used: 0 });
  const label =
    busiest && busiest.used > 0
      ? t('{meter} per day, {days, plural, one {# day} other {# days}}: {total, number} in all, most on {date} ({most, number})', {
          meter: meter.name,
          days: days.length,
          total,
          date: busiest.date,
          most: busiest.used,
        })
      : t('{meter} per day, {days, plural, one {# day} other {# days}}: {total, number} in all', { meter: meter.name, days: days.length, total });
  return (
    <svg viewBox={`0 0 ${width} ${height}`} class="h-32 w-full" role="img" aria-label={label} data-chart={meter.meter} preserveAspectRatio="none">
      <line x1="0" y1={height - 0.5} x2={width} y2={height - 0.5} class="stroke-line" stroke-width="1" />
      {days.map((d, i) => {
        const h = (d.used / top) * (height - 4);
        return (
          <rect key={d.date} x={i * bar + bar * 0.1} y={height - h} width={bar * 0.8} height={h} class="fill-primary" data-date={d.date} data-used={d.used}>
            <title>{`${dateOnly(d.date, '', 'UTC')}: ${numberText(d.used)}`}</title>
          </rect>
        );
      })}
    </svg>
  );
}

function MeterCard({ meter }: { meter: MeterUsage }) {
  const over = meter.hard !== null && meter.used >= meter.hard;
  const warned = !over && meter.soft !== null && meter.used >= meter.soft;
  return (
    <Card
      id={`usage-meter-${meter.meter}`}
      title={meter.name}
      actions={over ? <Badge tone="error">{t('Limit reached')}</Badge> : warned ? <Badge tone="warning">{t('Near the limit')}</Badge> : undefined}
    >
      <DataList
        items={[
          [t('Used this period'), count(meter.used), 'used'],
          [t('Warning at'), count(meter.soft), 'soft'],
          [t('Limit'), count(meter.hard), 'hard'],
        ]}
      />
      {meter.hard !== null && (
        <progress
          class="w-full"
          max={meter.hard}
          value={Math.min(meter.used, meter.hard)}
          aria-label={t('{name}: {used, number} of {hard, number}', { name: meter.name, used: meter.used, hard: meter.hard })}
        />
      )}
      <DailyChart meter={meter} />
    </Card>
  );
}

export function UsagePage() {
  const { state, dispatch } = useApp();
  const id = usageOrgIdOf(location.pathname);
  const page = state.usagePage?.orgId === id ? state.usagePage : undefined;
  useEffect(() => {
    if (id) dispatch(['usage/open', id]);
  }, [id]);
  const org = state.orgs?.find((o) => o.id === id);
  const back = id && (
    <Link to="org" path={orgPath(id)} id="usage-back">
      {org?.name ? t('← {name}', { name: org.name }) : t('← Back to the organization')}
    </Link>
  );
  const usage = page?.status === 'ready' ? page.usage : undefined;
  const header = (
    <PageHeader
      title={
        <>
          {t('Usage')}
          {org ? <> · {org.name}</> : null}
        </>
      }
      id="usage-title"
      back={back}
      description={
        usage
          ? t('Billing period {start} – {end}.', {
              start: dateOnly(usage.period.start, '—', 'UTC'),
              end: dateOnly(new Date(Date.parse(usage.period.end) - 1).toISOString(), '—', 'UTC'),
            })
          : undefined
      }
    />
  );
  if (!id || page?.status === 'missing') {
    return (
      <>
        {header}
        <Alert id="usage-missing" tone="error">
          {t('This organization does not exist, or you are not a member.')} <Link to="orgs">{t('Your organizations')}</Link>
        </Alert>
      </>
    );
  }
  if (page?.status === 'failed') {
    return (
      <>
        {header}
        <Alert tone="error">{t('The usage could not be loaded.')}</Alert>
      </>
    );
  }
  if (!usage) {
    return (
      <>
        {header}
        <Muted id="usage-loading">{t('Loading the usage…')}</Muted>
      </>
    );
  }
  const seatsFull = usage.seats.max !== null && usage.seats.used >= usage.seats.max;
  return (
    <>
      {header}
      <Stack columns={2}>
        <Card id="usage-seats" title={t('Seats')} actions={seatsFull ? <Badge tone="warning">{t('All seats taken')}</Badge> : undefined}>
          <DataList
            items={[
              [t('Plan'), t('{plan, select, none {none} other {{plan}}}', { plan: usage.plan ?? 'none' }), 'plan'],
              [t('Used'), numberText(usage.seats.used), 'seats-used'],
              [t('Included'), numberText(usage.seats.included), 'seats-included'],
              [t('At most'), count(usage.seats.max), 'seats-max'],
            ]}
          />
          <Muted>{t('Members and pending invitations take a seat each.')}</Muted>
          {seatsFull && id && (
            <Link to="org-billing" path={billingPath(id)} id="usage-upgrade">
              {t('Upgrade for more seats')}
            </Link>
          )}
        </Card>
        {usage.meters.map((m) => (
          <MeterCard key={m.meter} meter={m} />
        ))}
      </Stack>
    </>
  );
}
