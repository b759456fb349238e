/**
 * A page whose code is fetched when it is first opened (the operator's console: most readers
 * never open it, so the first page load does not carry it). Until it is there the page says it
 * is loading; once it renders, the focus moves to its title as a navigation's would.
 */
import { type ComponentType, h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { t } from '../i18n/words.js';

export function lazyPage(load: () => Promise<ComponentType>): ComponentType {
  let loaded: ComponentType | undefined;
  let pending: Promise<void> | undefined;
  return function LazyPage() {
    const [, setReady] = useState(false);
    const waiting = !loaded;
    useEffect(() => {
      if (!waiting) return;
      let live = true;
      pending ??= load().then((page) => {
        loaded = page;
      });
      void pending.then(() => {
        if (!live) return;
        setReady(true);
        // the view moved the focus before the page was there: move it to the title now
        requestAnimationFrame(() => {
          if (document.activeElement === document.body) document.querySelector<HTMLElement>('[data-page-title]')?.focus();
        });
      });
      return () => {
        live = false;
      };
    }, [waiting]);
    if (loaded) return h(loaded, {});
    return (
      <p class="text-sm text-muted" role="status">
        {t('Loading…')}
      </p>
    );
  };
}
