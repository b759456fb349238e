/**
 * The organization of the page's path, for its overview and members pages: loaded once for
 * both, and what they show while it is loading (when it is missing: org-page.tsx).
 */
import { useEffect } from 'preact/hooks';
import { useApp } from '../ui/app.js';
import { PageHeader } from '../ui/page-header.js';
import { orgIdInPath } from './events.js';
import { t } from '../i18n/words.js';

/** The organization of the page's path, loaded once per organization (the overview and the members page share it). */
export function useOrgPage() {
  const { state, dispatch } = useApp();
  const id = orgIdInPath(location.pathname);
  const page = state.orgPage?.id === id ? state.orgPage : undefined;
  // the page follows the path (switcher, links, back and forward)
  useEffect(() => {
    if (id && state.orgPage?.id !== id) dispatch(['org/open', id]);
  }, [id]);
  return { id, page };
}

/** The page while its organization loads (a plain function, so the page's header stays the same element when it arrives). */
export function loadingOrg(title: string) {
  return (
    <>
      <PageHeader title={title} />
      <p class="text-sm text-muted" role="status">
        {t('Loading organization…')}
      </p>
    </>
  );
}
