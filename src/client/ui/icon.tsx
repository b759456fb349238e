/** Icons from lucide (its icon data, drawn here as Preact SVG; only the icons imported are bundled). */
import type { IconNode } from 'lucide';

/** A decorative icon (hidden from assistive technology: the control it sits in has a name). */
export function Icon({ icon, size = 18, class: className }: { icon: IconNode; size?: number; class?: string }) {
  return (
    <svg
      xmlns="http://www.w3.org/2000/svg"
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width={2}
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
      focusable="false"
      class={className ? `shrink-0 ${className}` : 'shrink-0'}
    >
      {icon.map(([tag, attrs], i) => {
        const Tag = tag as 'path';
        return <Tag key={i} {...(attrs as Record<string, string>)} />;
      })}
    </svg>
  );
}
