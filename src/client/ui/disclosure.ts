/**
 * A disclosure: a button that shows and hides a panel beside it (the account menu, the
 * notifications bell). A click outside the box closes it; Escape inside closes it and gives the
 * focus back to the box's first button, its own.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export function useDisclosure() {
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const outside = (e: Event) => {
      if (!box.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('click', outside);
    return () => document.removeEventListener('click', outside);
  }, [open]);
  /** for the box: Escape anywhere in it (the keys reach the focused button or link first) */
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Escape' && open) {
      setOpen(false);
      box.current?.querySelector('button')?.focus();
    }
  };
  /** for the panel: following a link inside closes it */
  const onPanelClick = (e: MouseEvent) => {
    if ((e.target as HTMLElement).closest('a')) setOpen(false);
  };
  return { open, setOpen, box, onKeyDown, onPanelClick };
}
