/** The AI assistants feature: the account's page for connecting assistants to the MCP server, and those connected. */
import { Bot } from 'lucide';
import type { Feature } from '../shell/features.js';
import { lazyPage } from '../shell/lazy-page.js';
import { registerAssistants } from './events.js';
import { msg } from '../i18n/words.js';

// a settings page, fetched when first opened
const AssistantsPage = lazyPage(() => import('./page.js').then((m) => m.AssistantsPage));

export const assistants: Feature = {
  id: 'assistants',
  routes: [{ name: 'ai-assistants', path: '/settings/ai-assistants', page: AssistantsPage, access: 'signed-in', title: msg('AI assistants') }],
  // beside Connected apps: an assistant is a connected app too
  nav: [{ section: 'settings', route: 'ai-assistants', label: msg('AI assistants'), id: 'nav-ai-assistants', icon: Bot, order: 2.6 }],
  register: (core) => registerAssistants(core),
};
