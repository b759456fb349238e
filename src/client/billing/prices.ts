/** How a plan's price reads: `$12 per month`, `€99 every 3 months`; nothing when Stripe's details are absent. */
import type { Plan } from './events.js';
import { currentLocale, t } from '../i18n/words.js';

export type Interval = NonNullable<Plan['interval']>;

// currencies whose amounts Stripe counts in whole units (no cents)
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);

export function amountText(amount: number, currency: string): string {
  const value = ZERO_DECIMAL.has(currency.toLowerCase()) ? amount : amount / 100;
  return new Intl.NumberFormat(currentLocale(), { style: 'currency', currency: currency.toUpperCase(), maximumFractionDigits: value % 1 === 0 ? 0 : 2 }).format(
    value,
  );
}

export function intervalText(interval: Interval, count = 1): string {
  return count === 1
    ? t('{interval, select, day {per day} week {per week} month {per month} other {per year}}', { interval })
    : t(
        '{interval, select, day {every {count, plural, one {# day} other {# days}}} week {every {count, plural, one {# week} other {# weeks}}} month {every {count, plural, one {# month} other {# months}}} other {every {count, plural, one {# year} other {# years}}}}',
        { interval, count },
      );
}

/** The plan's readable name: Stripe's product name, else its id. */
export const planName = (plan: Plan) => plan.name ?? plan.id.charAt(0).toUpperCase() + plan.id.slice(1);

/** The intervals the plans come in (`month`, `year`), in that order. */
export function intervalsOf(plans: readonly Plan[]): Interval[] {
  const order: Interval[] = ['day', 'week', 'month', 'year'];
  return order.filter((i) => plans.some((p) => p.interval === i));
}

/** The plans shown for a chosen interval: those of that interval, and those without price details. */
export const plansFor = (plans: readonly Plan[], interval: Interval | undefined) => plans.filter((p) => !interval || !p.interval || p.interval === interval);
