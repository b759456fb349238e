/**
 * An on/off switch: a checkbox with the `switch` role (so it is announced "on" or "off"), drawn as
 * a track and a knob. The checkbox stays in the page for the keyboard and the form (`on` in its
 * fields when on; a disabled one is in none), visually hidden under the drawing its label holds.
 */
export function Switch({
  id,
  name,
  label,
  defaultChecked,
  disabled,
  describedBy,
}: {
  id: string;
  name: string;
  /** the accessible name (visually hidden: the row or column says it) */
  label: string;
  defaultChecked: boolean;
  disabled?: boolean;
  describedBy?: string;
}) {
  return (
    <label for={id} class={`relative inline-flex items-center ${disabled ? 'cursor-not-allowed' : 'cursor-pointer'}`}>
      <input
        id={id}
        name={name}
        type="checkbox"
        // biome-ignore lint/a11y/useAriaPropsForRole: a checkbox's own checked state is its aria-checked (ARIA in HTML); a fixed attribute would lie once it is toggled
        role="switch"
        defaultChecked={defaultChecked}
        disabled={disabled}
        aria-describedby={describedBy}
        class="peer sr-only"
      />
      <span class="sr-only">{label}</span>
      <span
        aria-hidden="true"
        class="relative h-6 w-11 shrink-0 rounded-full border border-line bg-raised transition-colors peer-checked:border-primary peer-checked:bg-primary peer-focus-visible:outline-2 peer-focus-visible:outline-offset-2 peer-focus-visible:outline-focus peer-disabled:opacity-60 [&>span]:bg-muted peer-checked:[&>span]:translate-x-5 rtl:peer-checked:[&>span]:-translate-x-5 peer-checked:[&>span]:bg-primary-fg"
      >
        <span class="absolute start-0.5 top-0.5 size-4.5 rounded-full shadow transition-transform" />
      </span>
    </label>
  );
}
