/**
 * The plans as cards (the billing page's, the pricing page's and the landing page's): name,
 * price and interval, what each comes with, a call to action per card, and a monthly/yearly
 * toggle when the plans come in both.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Badge } from '../ui/feedback.js';
import { USAGE_REPORT, type Meter, type Plan } from './events.js';
import { amountText, intervalsOf, intervalText, planName, plansFor, type Interval } from './prices.js';
import { t } from '../i18n/words.js';

/** Monthly or yearly, when the plans come in both; a group of two pressed buttons. */
function IntervalToggle({ intervals, value, onChange }: { intervals: Interval[]; value: Interval; onChange: (i: Interval) => void }) {
  const label: Record<Interval, string> = { day: t('Daily'), week: t('Weekly'), month: t('Monthly'), year: t('Yearly') };
  return (
    // biome-ignore lint/a11y/useSemanticElements: a row of toggle buttons; a fieldset would bring a legend and its own box
    <div role="group" aria-label={t('Billing interval')} id="interval-toggle" class="inline-flex rounded-lg border border-line bg-surface p-1">
      {intervals.map((i) => (
        <button
          key={i}
          type="button"
          aria-pressed={value === i}
          data-interval={i}
          onClick={() => onChange(i)}
          class={`rounded-md px-4 py-1.5 text-sm font-medium ${value === i ? 'bg-primary text-primary-fg' : 'text-fg hover:bg-raised'}`}
        >
          {label[i]}
        </button>
      ))}
    </div>
  );
}

/**
 * The plans as cards, with the monthly/yearly toggle when both exist. `action` renders each
 * card's call to action.
 */
export function PlanCards({
  plans,
  action,
  current,
  trialDays,
  meters,
}: {
  plans: Plan[];
  action: (plan: Plan) => ComponentChildren;
  current?: string | null;
  trialDays?: number;
  meters?: Meter[];
}) {
  const intervals = intervalsOf(plans);
  const [interval, setInterval] = useState<Interval | undefined>(intervals.includes('month') ? 'month' : intervals[0]);
  const shown = plansFor(plans, intervals.length > 1 ? interval : undefined);
  return (
    <div class="space-y-4">
      {intervals.length > 1 && interval && <IntervalToggle intervals={intervals} value={interval} onChange={setInterval} />}
      <ul id="plan-cards" class="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
        {shown.map((p) => (
          <li
            key={p.id}
            data-plan-card={p.id}
            class={`flex flex-col gap-3 rounded-xl border bg-surface p-5 ${current === p.id ? 'border-primary' : 'border-line'}`}
          >
            <div class="flex items-center justify-between gap-2">
              <h3 class="text-lg font-semibold">{planName(p)}</h3>
              {current === p.id && <Badge tone="success">{t('Current plan')}</Badge>}
            </div>
            {p.amount !== undefined && p.currency ? (
              <p>
                <span class="text-3xl font-bold" data-field="amount">
                  {amountText(p.amount, p.currency)}
                </span>{' '}
                {p.interval && (
                  <span class="text-sm text-muted" data-field="interval">
                    {intervalText(p.interval, p['interval-count'])}
                  </span>
                )}
              </p>
            ) : (
              <p class="text-sm text-muted">{t('Price shown at checkout')}</p>
            )}
            <ul class="space-y-1 text-sm text-muted">
              <li>{t('Organizations, members and roles')}</li>
              <li>{t('API keys and an audit log')}</li>
              {p.seats && (
                <li data-field="seats">
                  {p.seats.max === null ? t('Any number of seats') : t('{max, plural, one {Up to # seat} other {Up to # seats}}', { max: p.seats.max })}
                  {p.seats.included > 0 ? t(', {included, number} included', { included: p.seats.included }) : ''}
                </li>
              )}
              {Object.entries(p.limits ?? {}).map(([meter, l]) =>
                l.hard !== null ? (
                  <li key={meter} data-limit={meter}>
                    {t('Up to {limit, number} {meter} per billing period', { limit: l.hard, meter: meters?.find((m) => m.id === meter)?.name ?? meter })}
                  </li>
                ) : null,
              )}
              {p.features?.includes(USAGE_REPORT) && <li>{t('The usage report')}</li>}
              {p.features
                ?.filter((f) => f !== USAGE_REPORT)
                .map((f) => (
                  <li key={f} data-feature={f}>
                    {f.replace(/-/g, ' ')}
                  </li>
                ))}
              {trialDays ? <li>{t('{days, plural, one {# day free} other {# days free}}', { days: trialDays })}</li> : null}
            </ul>
            <div class="mt-auto pt-2">{action(p)}</div>
          </li>
        ))}
      </ul>
    </div>
  );
}
