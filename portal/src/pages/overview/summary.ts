// The overview's numbers, computed from the API's answers (pure, tested without a server).
import type { ClusterFieldsFragment, JobState, OverviewJobsQuery, RunningJobsQuery } from '../../gql/graphql';

/** A GPU counts as busy at or above this utilization; allocated and below it is "idle". */
export const BUSY_PCT = 10;

export interface FleetTotals {
  clusters: number;
  unhealthyClusters: number;
  gpus: number;
  /** GPUs with any share allocated. */
  allocated: number;
  /** Healthy GPUs with nothing allocated. */
  free: number;
  /** Allocated GPUs at or above BUSY_PCT in their latest reading. */
  busy: number;
  /** When the newest GPU reading was taken (null: none yet). */
  readingsAt: string | null;
}

export interface IdleGpu {
  id: string;
  clusterId: string;
  node: string;
  gpu: number;
  model: string;
  allocatedMilli: number;
  busyPct: number;
  job: { id: string; name: string; project: string } | null;
}

export function fleetTotals(clusters: readonly ClusterFieldsFragment[]): FleetTotals {
  const gpus = clusters.flatMap((c) => c.nodes.flatMap((n) => n.gpus));
  return {
    clusters: clusters.length,
    unhealthyClusters: clusters.filter((c) => c.health !== 'healthy').length,
    gpus: gpus.length,
    allocated: gpus.filter((g) => g.allocatedMilli > 0).length,
    free: gpus.filter((g) => g.allocatedMilli === 0 && g.healthy).length,
    busy: gpus.filter((g) => g.allocatedMilli > 0 && g.busyPct != null && g.busyPct >= BUSY_PCT).length,
    readingsAt: gpus.reduce<string | null>(
      (newest, g) => (g.metricsAt && (newest == null || Date.parse(g.metricsAt) > Date.parse(newest)) ? g.metricsAt : newest),
      null,
    ),
  };
}

type RunningJob = RunningJobsQuery['jobs']['nodes'][number];

/** The `devices` of a replica (`[{ index, milli }]`, set by the agent) as GPU indexes. */
export function deviceIndexes(devices: unknown): number[] {
  if (!Array.isArray(devices)) return [];
  return devices
    .map((d) => (typeof d === 'object' && d !== null ? (d as { index?: unknown }).index : d))
    .filter((i): i is number => typeof i === 'number');
}

/**
 * Allocated GPUs under BUSY_PCT busy, least busy first, each with the running job that holds
 * it when one of `running` does. GPUs without a reading yet are left out (unknown, not idle).
 */
export function idleGpus(clusters: readonly ClusterFieldsFragment[], running: readonly RunningJob[]): IdleGpu[] {
  const holder = new Map<string, IdleGpu['job']>();
  for (const j of running) {
    for (const r of j.replicas) {
      if (!r.clusterId || !r.node) continue;
      for (const i of deviceIndexes(r.devices)) {
        holder.set(`${r.clusterId}/${r.node}/${i}`, { id: j.id, name: j.name, project: j.project.slug });
      }
    }
  }
  const out: IdleGpu[] = [];
  for (const c of clusters) {
    for (const n of c.nodes) {
      for (const g of n.gpus) {
        if (g.allocatedMilli === 0 || g.busyPct == null || g.busyPct >= BUSY_PCT) continue;
        const id = `${c.id}/${n.name}/${g.index}`;
        out.push({
          id,
          clusterId: c.id,
          node: n.name,
          gpu: g.index,
          model: g.model,
          allocatedMilli: g.allocatedMilli,
          busyPct: g.busyPct,
          job: holder.get(id) ?? null,
        });
      }
    }
  }
  return out.sort((a, b) => a.busyPct - b.busyPct || a.id.localeCompare(b.id));
}

export interface JobCounts {
  byState: { state: JobState; count: number }[];
  /** Counted over the newest jobs only (there are more). */
  truncated: boolean;
  queueDepth: number;
  queueDepthTruncated: boolean;
}

export function jobCounts(data: OverviewJobsQuery): JobCounts {
  const counts = new Map<JobState, number>();
  for (const j of data.recent.nodes) counts.set(j.state, (counts.get(j.state) ?? 0) + 1);
  return {
    byState: [...counts].map(([state, count]) => ({ state, count })).sort((a, b) => b.count - a.count),
    truncated: data.recent.pageInfo.hasNextPage,
    queueDepth: data.waiting.nodes.length,
    queueDepthTruncated: data.waiting.pageInfo.hasNextPage,
  };
}
