/**
 * The sessions page's events: the account's live sessions loaded, one ended, or every other one
 * ended (one DELETE each). The page is entered through `page/enter` of account/events.ts.
 */
import type { EventCore } from '../core.js';
import type { AppState } from '../shell/state.js';

export interface Session {
  id: string;
  'created-at': string;
  'last-used-at': string;
  'user-agent': string | null;
  ip: string | null;
  current: boolean;
}

/** This part of the app state; every field is absent until the sessions page sets it. */
export interface SessionsState {
  /** undefined until loaded */
  sessions?: Session[];
  /** the sessions whose DELETE is under way */
  endingSessions?: string[];
}

declare module '../shell/state.js' {
  interface AppState extends SessionsState {}
}

export function registerSessions(core: EventCore<AppState>): void {
  core
    .regEvent('sessions/load', () => ({
      'http/auth-api': { url: 'account/sessions', successPath: ['sessions'], onSuccess: ['sessions/loaded'], onFailure: ['request/failed'] },
    }))
    .regEvent('sessions/loaded', ({ state }, [, sessions]) => ({ db: { ...state, sessions: sessions as Session[] } }))
    .regEvent('sessions/end', ({ state }, [, id]) => ({
      db: { ...state, endingSessions: [...(state.endingSessions ?? []), id as string] },
      'http/auth-api': {
        url: `account/sessions/${encodeURIComponent(id as string)}`,
        method: 'delete',
        onSuccess: ['sessions/ended', id],
        onFailureN: [['request/failed'], ['sessions/end-failed', id]],
      },
    }))
    .regEvent('sessions/ended', ({ state }, [, id]) => ({
      db: { ...state, sessions: state.sessions?.filter((s) => s.id !== id), endingSessions: state.endingSessions?.filter((e) => e !== id) },
    }))
    .regEvent('sessions/end-failed', ({ state }, [, id]) => ({
      db: { ...state, endingSessions: state.endingSessions?.filter((e) => e !== id) },
    }))
    // one DELETE per other session: the API ends one family at a time
    .regEvent('sessions/end-others', ({ state }) => {
      const ending = new Set(state.endingSessions);
      const others = (state.sessions ?? []).filter((s) => !s.current && !ending.has(s.id));
      if (others.length === 0) return;
      return { dispatchN: others.map((s) => ['sessions/end', s.id]) };
    });
}
