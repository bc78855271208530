import type { PlannedResult } from '../../api/planned';
import { unavailable } from '../../api/planned';
import type { ClusterInfo } from './types';

/** The clusters with nodes and GPUs: waits for the fields of clusters.planned.graphql. */
export function useClusters(): PlannedResult<ClusterInfo[]> {
  return unavailable(['clusters (nodes, gpus)', 'subscription clusterCapacity']);
}
