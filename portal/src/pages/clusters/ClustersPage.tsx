import { Typography } from '@mui/material';
import { useQuery } from 'urql';
import { READINGS_MS, useReadEvery, useRefetchOn } from '../../api/live';
import { ClustersQuery, ClusterUpdatesSubscription, MeQuery } from '../../api/operations';
import { ErrorState, Loading } from '../../components/states';
import { ClustersView } from './ClustersView';

/**
 * Every cluster with its nodes and GPUs; live through clusterUpdates, readings every 10 s.
 * Platform admins operate clusters and nodes from here.
 */
export function ClustersPage() {
  const [res, reexecute] = useQuery({ query: ClustersQuery });
  const [me] = useQuery({ query: MeQuery });
  const refetch = () => reexecute({ requestPolicy: 'network-only' });
  useRefetchOn(ClusterUpdatesSubscription, {}, false, refetch);
  useReadEvery(refetch, READINGS_MS);
  return (
    <>
      <Typography variant="h5" component="h1" sx={{ mb: 2 }}>
        Clusters
      </Typography>
      {res.data ? (
        <ClustersView clusters={res.data.clusters} canOperate={!!me.data?.me.platformAdmin} onChanged={refetch} />
      ) : res.error ? (
        <ErrorState error={res.error} onRetry={refetch} />
      ) : (
        <Loading label="Loading clusters" />
      )}
    </>
  );
}
