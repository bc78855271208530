export type UsageGroupBy = 'project' | 'gpuModel' | 'clusterId';

/** One row of `usage(filter, groupBy, period)`. */
export interface UsageRow {
  periodStart: string;
  project: string;
  gpuModel: string;
  clusterId: string;
  gpuHours: number;
  cost: number;
  currency: string;
}

export type ExportFormat = 'FOCUS_CSV' | 'FOCUS_JSONL';
