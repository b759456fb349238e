/** Notices inside a page (the outcome of a link, a warning, an error) and small status badges. */
import type { ComponentChildren } from 'preact';

export type Tone = 'info' | 'success' | 'warning' | 'error';

const TONES: Record<Tone, string> = {
  info: 'border-line bg-raised text-fg',
  success: 'border-success bg-success-soft text-fg',
  warning: 'border-warning bg-warning-soft text-fg',
  error: 'border-danger bg-danger-soft text-fg',
};

/** A notice; errors are alerts, the rest statuses (announced politely). */
export function Alert({
  tone = 'info',
  id,
  children,
  'data-status': status,
  'data-notice': notice,
  'data-code': code,
}: {
  tone?: Tone;
  id?: string;
  children: ComponentChildren;
  'data-status'?: string;
  'data-notice'?: string;
  'data-code'?: string;
}) {
  return (
    <div
      id={id}
      role={tone === 'error' ? 'alert' : 'status'}
      data-status={status}
      data-notice={notice}
      data-code={code}
      class={`rounded-lg border-s-4 border px-4 py-3 text-sm ${TONES[tone]}`}
    >
      {children}
    </div>
  );
}

export function Badge({ children, tone = 'info' }: { children: ComponentChildren; tone?: Tone }) {
  const colors =
    tone === 'success'
      ? 'bg-success-soft text-success'
      : tone === 'error'
        ? 'bg-danger-soft text-danger'
        : tone === 'warning'
          ? 'bg-warning-soft text-warning'
          : 'bg-primary-soft text-fg';
  return <span class={`badge inline-block whitespace-nowrap rounded-md px-2 py-0.5 text-xs font-medium ${colors}`}>{children}</span>;
}
