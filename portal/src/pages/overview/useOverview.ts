import type { PlannedResult } from '../../api/planned';
import { unavailable } from '../../api/planned';
import type { OverviewData } from './types';

/** The Overview's data: waits for the fields of overview.planned.graphql. */
export function useOverview(): PlannedResult<OverviewData> {
  return unavailable(['clusters', 'jobs (top level, totalCount)', 'jobCounts', 'idleAllocatedGpus']);
}
