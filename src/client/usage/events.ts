/**
 * An organization's usage in the client (`/orgs/<id>/usage`, any member): its plan and billing
 * period, seats against the plan's included and max, and each meter against its soft and hard
 * limits with its daily usage (GET /api/orgs/:id/usage). A non-member is told the organization
 * does not exist for it (404).
 */
import type { EventCore } from '../core.js';
import type { AppState } from '../shell/state.js';

export interface MeterUsage {
  meter: string;
  name: string;
  used: number;
  soft: number | null;
  hard: number | null;
  daily: Array<{ date: string; used: number }>;
}

export interface OrganizationUsage {
  plan: string | null;
  period: { start: string; end: string };
  seats: { used: number; included: number; max: number | null };
  meters: MeterUsage[];
}

export interface UsagePageState {
  orgId: string;
  status: 'loading' | 'ready' | 'missing' | 'failed';
  usage?: OrganizationUsage;
}

export interface UsageState {
  usagePage?: UsagePageState;
}

declare module '../shell/state.js' {
  interface AppState extends UsageState {}
}

/** `/orgs/<id>/usage` -> the id */
export function usageOrgIdOf(path: string): string | undefined {
  return /^\/orgs\/([0-9a-f-]{36})\/usage\/?$/i.exec(path)?.[1]?.toLowerCase();
}

export const usagePath = (orgId: string) => `/orgs/${orgId}/usage`;

export function registerUsage(core: EventCore<AppState>): void {
  core
    .regEvent('usage/open', ({ state }, [, orgId]) => ({
      db: { ...state, usagePage: { orgId: orgId as string, status: 'loading' } },
      'http/auth-api': { url: `orgs/${orgId}/usage`, onSuccess: ['usage/loaded', orgId], onFailure: ['usage/failed', orgId] },
    }))
    .regEvent('usage/loaded', ({ state }, [, orgId, body]) => {
      if (state.usagePage?.orgId !== orgId) return;
      return { db: { ...state, usagePage: { orgId: orgId as string, status: 'ready', usage: body as OrganizationUsage } } };
    })
    .regEvent('usage/failed', ({ state }, [, orgId, failure]) => {
      const page = state.usagePage;
      if (page?.orgId !== orgId) return;
      const type = (failure as { type?: string }).type;
      if (type === 'not-found') return { db: { ...state, usagePage: { ...page, status: 'missing' } } };
      return { db: { ...state, usagePage: { ...page, status: 'failed' } }, dispatch: ['request/failed', failure] };
    });
}
