import { Typography } from '@mui/material';
import { useMemo } from 'react';
import { useQuery } from 'urql';
import { READINGS_MS, useReadEvery, useRefetchOn } from '../../api/live';
import { ClustersQuery, ClusterUpdatesSubscription, OverviewJobsQuery, RunningJobsQuery } from '../../api/operations';
import { ErrorState, Loading } from '../../components/states';
import { fleetTotals, idleGpus, jobCounts } from './summary';
import { OverviewView } from './OverviewView';

/** How many of the newest jobs the counts cover (the API's page limit). */
const JOBS = 500;

/** What a platform admin opens first; live through clusterUpdates, readings every 10 s. */
export function OverviewPage() {
  const [clusters, refetchClusters] = useQuery({ query: ClustersQuery });
  const [jobs, refetchJobs] = useQuery({ query: OverviewJobsQuery, variables: { first: JOBS } });
  const [running, refetchRunning] = useQuery({ query: RunningJobsQuery, variables: { first: 200 } });
  const refetch = () => {
    const opts = { requestPolicy: 'network-only' } as const;
    refetchClusters(opts);
    refetchJobs(opts);
    refetchRunning(opts);
  };
  useRefetchOn(ClusterUpdatesSubscription, {}, false, refetch);
  // Utilization readings change without a cluster event: read them again as they arrive.
  useReadEvery(() => {
    const opts = { requestPolicy: 'network-only' } as const;
    refetchClusters(opts);
    refetchRunning(opts);
  }, READINGS_MS);

  const view = useMemo(() => {
    if (!clusters.data || !jobs.data) return null;
    return {
      totals: fleetTotals(clusters.data.clusters),
      jobs: jobCounts(jobs.data),
      idle: idleGpus(clusters.data.clusters, running.data?.jobs.nodes ?? []),
    };
  }, [clusters.data, jobs.data, running.data]);

  const error = clusters.error ?? jobs.error;
  return (
    <>
      <Typography variant="h5" component="h1" sx={{ mb: 2 }}>
        Overview
      </Typography>
      {view ? (
        <OverviewView {...view} />
      ) : error ? (
        <ErrorState error={error} onRetry={refetch} />
      ) : (
        <Loading label="Loading the fleet" />
      )}
    </>
  );
}
