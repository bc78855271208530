import { Button } from '@mui/material';
import { useEffect } from 'react';
import { Link as RouterLink, useNavigate, useParams } from 'react-router-dom';
import { useMutation, useQuery } from 'urql';
import { READINGS_MS, useReadEvery, useRefetchOn } from '../../api/live';
import {
  DeleteServiceMutation,
  MeQuery,
  ProjectJobEventsSubscription,
  ScaleServiceMutation,
  ServiceQuery,
  SetServiceLoadMutation,
} from '../../api/operations';
import { useCurrentProject } from '../../auth/context';
import { errorCode, ErrorState, Loading, NotFound } from '../../components/states';
import { canManageService } from './serviceFormat';
import { ServiceCost } from '../../components/WorkloadCost';
import { ServiceView } from './ServiceView';

/** How many changes of the desired count the page shows (the API's default is 50). */
const HISTORY = 100;

export function ServicePage() {
  const { project = '', name = '' } = useParams();
  const navigate = useNavigate();
  const [res, reexecute] = useQuery({ query: ServiceQuery, variables: { project, name, history: HISTORY } });
  const [me] = useQuery({ query: MeQuery });
  const [, scaleService] = useMutation(ScaleServiceMutation);
  const [, setServiceLoad] = useMutation(SetServiceLoadMutation);
  const [, deleteService] = useMutation(DeleteServiceMutation);
  const { setCurrent } = useCurrentProject();
  const service = res.data?.service;
  const proj = res.data?.project;
  const refetch = () => reexecute({ requestPolicy: 'network-only' });
  // Live, as the job page: a service's replicas are jobs of its project, so every job event of
  // the project (a replica admitted, started, stopped; one added or removed by scaling) refetches.
  useRefetchOn(ProjectJobEventsSubscription, { projectId: proj?.id ?? '' }, !proj || !service, refetch);
  // The request rate, readiness and GPU utilization change without a job event.
  useReadEvery(refetch, READINGS_MS, !service);

  useEffect(() => {
    setCurrent(proj ? { slug: proj.slug, role: proj.myRole } : null);
    return () => setCurrent(null);
  }, [proj, setCurrent]);

  if (res.fetching && !res.data) return <Loading label="Loading the service" />;
  if ((res.error && errorCode(res.error) === 'NOT_FOUND') || (!res.error && !service)) return <NotFound what="service" />;
  if (res.error && !service) {
    return (
      <>
        <ErrorState error={res.error} onRetry={refetch} />
        <Button component={RouterLink} to="/services" sx={{ ml: 2 }}>
          All services
        </Button>
      </>
    );
  }
  if (!service) return <NotFound what="service" />;
  const after = <T,>(r: { error?: T }) => {
    if (!r.error) refetch();
    return r.error;
  };
  return (
    <ServiceView
      service={service}
      canManage={canManageService(service.owner, me.data?.me.subject, proj?.myRole)}
      onScale={async (v) => after(await scaleService({ project, name, ...v }))}
      onSetLoad={async (requestsPerSecond) => after(await setServiceLoad({ project, name, requestsPerSecond }))}
      cost={<ServiceCost project={project} name={name} changedAt={service.updatedAt} />}
      onDelete={async () => {
        const r = await deleteService({ project, name });
        if (!r.error) navigate('/services');
        return r.error;
      }}
    />
  );
}
