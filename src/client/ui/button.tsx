/** Buttons: one look per intent (primary, secondary, danger, ghost, link), for buttons and for links that route. */
import type { ComponentChildren } from 'preact';
import { plainClick, useApp } from './app.js';

export type Variant = 'primary' | 'secondary' | 'danger' | 'ghost' | 'link';

const BASE =
  'inline-flex items-center justify-center gap-2 rounded-lg text-sm font-medium no-underline transition-colors disabled:cursor-progress disabled:opacity-60 aria-disabled:cursor-not-allowed aria-disabled:text-muted aria-disabled:no-underline';
const VARIANTS: Record<Variant, string> = {
  primary: 'min-h-10 px-4 py-2 bg-primary text-primary-fg hover:no-underline hover:brightness-110',
  secondary: 'min-h-10 px-4 py-2 border border-line bg-surface text-fg hover:bg-raised hover:no-underline',
  danger: 'min-h-10 px-4 py-2 bg-danger text-danger-fg hover:no-underline hover:brightness-110',
  ghost: 'min-h-10 px-3 py-2 text-fg hover:bg-raised hover:no-underline',
  link: 'p-0 text-primary underline underline-offset-2',
};

/** The classes of a button of `variant`: for elements that must look like one (a plain link to a server URL). */
export const buttonClass = (variant: Variant = 'primary', extra = '') => `${BASE} ${VARIANTS[variant]} ${extra}`.trim();

export interface ButtonProps {
  children: ComponentChildren;
  variant?: Variant;
  type?: 'button' | 'submit';
  id?: string;
  /** more classes (test hooks such as `end-session`) */
  class?: string;
  disabled?: boolean;
  /** unavailable but still focusable: for a button that turns unavailable as it is used (the focus stays on it); its onClick checks */
  'aria-disabled'?: boolean;
  title?: string;
  onClick?: (e: MouseEvent) => void;
  'aria-label'?: string;
  'aria-expanded'?: boolean;
  'aria-controls'?: string;
  'aria-haspopup'?: 'menu' | 'dialog';
  'data-plan'?: string;
  'data-link-provider'?: string;
  /** a submit button's name and value: the form's submitter says which was pressed */
  name?: string;
  value?: string;
}

export function Button({ children, variant = 'primary', type = 'button', class: className = '', ...rest }: ButtonProps) {
  return (
    <button type={type} class={buttonClass(variant, className)} {...rest}>
      {children}
    </button>
  );
}

/** A submit button, disabled while a request is under way. */
export function Submit({ children, danger, id }: { children: ComponentChildren; danger?: boolean; id?: string }) {
  const { state } = useApp();
  return (
    <Button type="submit" id={id} variant={danger ? 'danger' : 'primary'} disabled={state.busy}>
      {children}
    </Button>
  );
}

/** A link that routes in the app and looks like a button. */
export function ButtonLink({
  to,
  path,
  children,
  variant = 'primary',
  id,
  class: className = '',
}: {
  to: string;
  path?: string;
  children: ComponentChildren;
  variant?: Variant;
  id?: string;
  class?: string;
}) {
  const { dispatch, router } = useApp();
  return (
    <a
      id={id}
      href={path ?? router.pathOf(to)}
      class={buttonClass(variant, className)}
      onClick={(e) => {
        if (!plainClick(e)) return;
        e.preventDefault();
        dispatch(['router/navigate', { route: to, path }]);
      }}
    >
      {children}
    </a>
  );
}
