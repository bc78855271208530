import dayjs from 'dayjs';
import relativeTime from 'dayjs/plugin/relativeTime';
import type { JobState, RoleName } from '../gql/graphql';

dayjs.extend(relativeTime);

export const formatTime = (iso: string | null | undefined) => (iso ? dayjs(iso).format('YYYY-MM-DD HH:mm:ss') : '—');
/** How long ago (or until) `iso` is at `now`; pass `useNow()` so the text stays true on screen. */
export const fromNow = (iso: string | null | undefined, now: number = Date.now()) =>
  iso ? dayjs(iso).from(dayjs(now)) : '—';

/** A duration as an estimate reads: "~40 s", "~14 min", "~2 h 5 min". */
export function aboutSeconds(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `~${s} s`;
  const minutes = Math.round(s / 60);
  if (s < 3600) return `~${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m === 0 ? `~${h} h` : `~${h} h ${m} min`;
}

/** A resource amount as people read it: GPU milli as GPUs, memory in GiB. */
export function formatResource(resource: string, amount: number): string {
  if (resource === 'gpu' || resource.startsWith('gpu/') || resource.startsWith('pool/')) {
    return `${+(amount / 1000).toFixed(2)} GPU`;
  }
  if (resource === 'cpu_milli') return `${+(amount / 1000).toFixed(2)} CPU`;
  if (resource === 'memory_mib') return `${+(amount / 1024).toFixed(1)} GiB`;
  return String(amount);
}

/** Memory in MiB as people read it: "700 MiB", "3.2 GiB". */
export function formatMib(mib: number): string {
  return mib < 1024 ? `${Math.round(mib)} MiB` : `${+(mib / 1024).toFixed(1)} GiB`;
}

/** A rate in bytes per second: "0 B/s", "12 KB/s", "3.4 MB/s" (decimal, as disks and links are sold). */
export function formatRate(bytesPerSecond: number): string {
  const units = ['B/s', 'KB/s', 'MB/s', 'GB/s'];
  let v = Math.max(0, bytesPerSecond);
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i += 1;
  }
  return `${i === 0 ? Math.round(v) : +v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export const ROLE_LABEL: Record<RoleName, string> = {
  VIEWER: 'viewer',
  MEMBER: 'member',
  PROJECT_ADMIN: 'project admin',
  TENANT_ADMIN: 'tenant admin',
  PLATFORM_ADMIN: 'platform admin',
};

export const ROLE_RANK: Record<RoleName, number> = {
  VIEWER: 0,
  MEMBER: 1,
  PROJECT_ADMIN: 2,
  TENANT_ADMIN: 3,
  PLATFORM_ADMIN: 4,
};

/**
 * Every job state in the API's order, and whether it is final (grus-api's
 * `domain::JobState::is_terminal`; `api/tests` checks this table against it). A `Record` over
 * the generated `JobState`, so a state the schema adds does not compile until it is listed.
 */
const JOB_STATE_IS_FINAL: Record<JobState, boolean> = {
  PENDING: false,
  ADMITTED: false,
  DISPATCHED: false,
  REJECTED: false,
  SCHEDULED: false,
  RUNNING: false,
  PREEMPTING: false,
  PREEMPTED: false,
  SUCCEEDED: true,
  FAILED: true,
  CANCELLED: true,
  UNKNOWN: false,
  SUSPENDED: false,
};

export const JOB_STATES = Object.keys(JOB_STATE_IS_FINAL) as readonly JobState[];

/**
 * The states of a job waiting to start, in its queue's line (the API's
 * `JobState::waits_to_start`; a drift test compares them).
 */
export const WAITING_STATES: readonly JobState[] = ['PENDING', 'ADMITTED', 'DISPATCHED', 'REJECTED', 'SCHEDULED', 'PREEMPTED'];

/** The states nothing moves a job out of (a rejected job is dispatched again: not final). */
export const TERMINAL_STATES: readonly JobState[] = JOB_STATES.filter((s) => JOB_STATE_IS_FINAL[s]);

export type ChipColor = 'default' | 'primary' | 'secondary' | 'error' | 'info' | 'success' | 'warning';

export function stateColor(state: string): ChipColor {
  switch (state.toUpperCase()) {
    case 'RUNNING':
      return 'primary';
    case 'SUCCEEDED':
      return 'success';
    case 'FAILED':
    case 'REJECTED':
      return 'error';
    case 'PREEMPTING':
    case 'PREEMPTED':
    case 'SUSPENDED':
      return 'warning';
    case 'ADMITTED':
    case 'DISPATCHED':
    case 'SCHEDULED':
    case 'PLACED':
      return 'info';
    default:
      return 'default';
  }
}
