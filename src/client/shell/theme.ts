/**
 * Light and dark: the page follows prefers-color-scheme until the toggle chooses, and the choice
 * is remembered (localStorage `theme`). Applied to `<html data-theme>` before the first render.
 */
export type Theme = 'light' | 'dark';

export const THEME_KEY = 'theme';

function stored(): Theme | undefined {
  try {
    const t = localStorage.getItem(THEME_KEY);
    return t === 'light' || t === 'dark' ? t : undefined;
  } catch {
    return undefined;
  }
}

/** The theme in force: the remembered choice, else the system's. */
export function currentTheme(): Theme {
  return stored() ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
}

/** Applies the remembered choice (none: the stylesheet follows the system). */
export function applyStoredTheme(): void {
  const t = stored();
  if (t) document.documentElement.dataset.theme = t;
}

export function chooseTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  try {
    localStorage.setItem(THEME_KEY, theme);
  } catch {
    /* not kept */
  }
}
