// How the Services pages write a service's state, autoscaling rule and history.
import type { ChipColor } from '../../components/format';
import { ROLE_RANK } from '../../components/format';
import type { RoleName, ScalingMetric, ServiceState } from '../../gql/graphql';
import { formatDuration } from '../../jobs/humantime';

/** The service page's path. */
export const servicePath = (s: { project: string; name: string }) =>
  `/services/${encodeURIComponent(s.project)}/${encodeURIComponent(s.name)}`;

export const SERVICE_STATE_COLOR: Record<ServiceState, ChipColor> = {
  READY: 'success',
  PROGRESSING: 'info',
  DEGRADED: 'error',
  DELETED: 'default',
};

/** A number without trailing zeros (at most two decimals). */
export const num = (n: number) => String(+n.toFixed(2));

/** `request rate, 10/s per replica`, `GPU utilization 60 %`, or `none` without a rule. */
export function autoscalingSummary(
  a: { metric: ScalingMetric; target: number; scaleDownDelaySeconds?: number } | null | undefined,
  { delay = false }: { delay?: boolean } = {},
): string {
  if (!a) return 'none';
  const rule = a.metric === 'REQUEST_RATE' ? `request rate, ${num(a.target)}/s per replica` : `GPU utilization ${num(a.target)} %`;
  return delay && a.scaleDownDelaySeconds != null ? `${rule}; scales down after ${formatDuration(a.scaleDownDelaySeconds)}` : rule;
}

/** What autoscaling measured, in the unit of the service's rule; `manual` for a manual scale. */
export function signalText(signal: number | null | undefined, metric: ScalingMetric | undefined): string {
  if (signal == null) return 'manual';
  if (metric === 'REQUEST_RATE') return `${num(signal)} req/s`;
  if (metric === 'GPU_UTILIZATION') return `${num(signal)} % busy`;
  return num(signal);
}

/** The service revision a replica runs: its job spec's `service.revision`. */
export function replicaRevision(spec: unknown): number | null {
  if (typeof spec !== 'object' || spec === null) return null;
  const service = (spec as Record<string, unknown>).service;
  if (typeof service !== 'object' || service === null) return null;
  const revision = (service as Record<string, unknown>).revision;
  return typeof revision === 'number' ? revision : null;
}

/**
 * Whether the caller may scale, load or delete the service: its owner (a member or above) or a
 * project admin (the server's `own_service`; a platform admin's role in every project is
 * PLATFORM_ADMIN). The server stays the judge; this only hides what would be refused.
 */
export function canManageService(owner: string, me: string | undefined, role: RoleName | undefined): boolean {
  if (!role) return false;
  if (ROLE_RANK[role] >= ROLE_RANK.PROJECT_ADMIN) return true;
  return ROLE_RANK[role] >= ROLE_RANK.MEMBER && me !== undefined && me === owner;
}

/**
 * The desired count over time from the scaling history (newest first, as the API gives it):
 * the count before the oldest change, each change, and the count now.
 */
export function desiredSeries(
  history: readonly { at: string; fromReplicas: number; toReplicas: number }[],
  desiredNow: number,
  now: Date,
): { at: Date; replicas: number }[] {
  if (history.length === 0) return [];
  const oldest = [...history].reverse();
  const first = oldest[0]!;
  const points = [{ at: new Date(first.at), replicas: first.fromReplicas }];
  for (const e of oldest) points.push({ at: new Date(e.at), replicas: e.toReplicas });
  const last = points[points.length - 1]!;
  if (now.getTime() > last.at.getTime()) points.push({ at: now, replicas: desiredNow });
  return points;
}
