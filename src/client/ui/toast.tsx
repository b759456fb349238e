/** Toasts: the results of async actions, announced politely (`role="status"`), errors assertively; a click dismisses one. */
import { useApp } from './app.js';
import { rich } from '../i18n/rich.js';

export function Toasts() {
  const { state, dispatch } = useApp();
  return (
    <div class="pointer-events-none fixed inset-x-4 bottom-4 z-50 flex flex-col items-end gap-2 sm:start-auto">
      {state.toasts.map((toast) => (
        <div
          key={toast.id}
          data-toast={toast.id}
          role={toast.kind === 'info' ? 'status' : 'alert'}
          class={`toast ${toast.kind ?? 'error'} pointer-events-auto flex max-w-sm items-start gap-3 rounded-lg border px-4 py-3 text-sm shadow-lg ${toast.kind === 'info' ? 'border-line bg-fg text-bg' : 'border-danger bg-danger text-danger-fg'}`}
        >
          <span class="min-w-0 flex-1 break-words">{toast.message}</span>
          <button type="button" class="shrink-0 rounded px-1 font-semibold underline" onClick={() => dispatch(['toast/dismiss', toast.id])}>
            {/* seen: "Dismiss"; heard: "Dismiss message" */}
            {rich('Dismiss<0> message</0>', [(text) => <span class="sr-only">{text}</span>])}
          </button>
        </div>
      ))}
    </div>
  );
}
