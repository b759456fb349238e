/**
 * The signed-in side navigation, made of the features' links by section; a link shows only when
 * its path exists for the state (an organization's pages, once one is chosen).
 */
import { plainClick, useApp } from '../ui/app.js';
import { Icon } from '../ui/icon.js';
import type { Feature, NavItem } from './features.js';
import { t, msg } from '../i18n/words.js';

const SECTIONS: Array<{ id: NavItem['section']; label: string }> = [
  { id: 'main', label: msg('Home') },
  { id: 'org', label: msg('Organization') },
  { id: 'settings', label: msg('Account') },
  { id: 'admin', label: msg('Platform') },
];

/** The side navigation: the features' links by section, each shown when its path exists for the state and the location. */
export function SideNav({ features, onNavigate }: { features: readonly Feature[]; onNavigate: () => void }) {
  const { state, dispatch } = useApp();
  const items = features.flatMap((f) => f.nav ?? []).sort((a, b) => a.order - b.order);
  const current = typeof location === 'undefined' ? '' : location.pathname;
  return (
    <nav id="side-nav" aria-label={t('Main')} class="space-y-6 text-sm">
      {SECTIONS.map((section) => {
        const links = items
          .filter((i) => i.section === section.id)
          .map((i) => ({ item: i, path: i.path ? i.path(state, current) : undefined }))
          .filter((l) => !l.item.path || l.path);
        if (links.length === 0) return null;
        return (
          <div key={section.id}>
            <h2 class="mb-2 px-3 text-xs font-semibold uppercase tracking-wide text-muted">{t(section.label)}</h2>
            <ul class="space-y-1">
              {links.map(({ item, path }) => {
                const active = state.route === item.route && (!path || current === path);
                return (
                  <li key={item.route}>
                    <NavLink item={item} path={path} active={active} onNavigate={onNavigate} dispatch={dispatch} />
                  </li>
                );
              })}
            </ul>
          </div>
        );
      })}
    </nav>
  );
}

function NavLink({
  item,
  path,
  active,
  onNavigate,
  dispatch,
}: {
  item: NavItem;
  path?: string;
  active: boolean;
  onNavigate: () => void;
  dispatch: (e: [string, ...unknown[]]) => void;
}) {
  const { router } = useApp();
  return (
    <a
      id={item.id}
      href={path ?? router.pathOf(item.route)}
      aria-current={active ? 'page' : undefined}
      class={`flex items-center gap-3 rounded-lg px-3 py-2 no-underline hover:bg-raised hover:no-underline ${active ? 'bg-primary-soft font-semibold text-fg' : 'text-fg'}`}
      onClick={(e) => {
        if (!plainClick(e)) return;
        e.preventDefault();
        onNavigate();
        dispatch(['router/navigate', { route: item.route, path }]);
      }}
    >
      {item.icon && <Icon icon={item.icon} />}
      <span class="min-w-0 break-words">{t(item.label)}</span>
    </a>
  );
}
