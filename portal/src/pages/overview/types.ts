import type { JobState } from '../../gql/graphql';

export interface ClusterSummary {
  id: string;
  name: string;
  healthy: boolean;
  gpusTotal: number;
  gpusAllocated: number;
  gpusBusy: number;
}

export interface IdleGpu {
  clusterId: string;
  node: string;
  gpu: string;
  busyPercent: number;
  jobId: string;
  jobName: string;
  project: string;
}

/** What overview.planned.graphql answers, flattened for the view. */
export interface OverviewData {
  clusters: ClusterSummary[];
  queueDepth: number;
  jobsByState: { state: JobState; count: number }[];
  idleGpus: IdleGpu[];
}
