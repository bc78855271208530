import { Box, Button, Chip, Link, Stack, Typography } from '@mui/material';
import { DataGrid, GridToolbar, type GridColDef } from '@mui/x-data-grid';
import { useMemo } from 'react';
import { Link as RouterLink } from 'react-router-dom';
import { useQuery } from 'urql';
import { useRefetchOn } from '../../api/live';
import { ProjectJobEventsSubscription, ProjectsQuery, ServicesQuery } from '../../api/operations';
import { gridEnvProps } from '../../components/grid';
import { Empty, ErrorState, Loading } from '../../components/states';
import type { ServicesQuery as Services } from '../../gql/graphql';
import { autoscalingSummary, SERVICE_STATE_COLOR, servicePath } from './serviceFormat';

type ServiceRow = Services['services'][number];

const columns: GridColDef<ServiceRow>[] = [
  {
    field: 'name',
    headerName: 'Name',
    flex: 1,
    minWidth: 140,
    renderCell: (p) => (
      <Link component={RouterLink} to={servicePath(p.row)}>
        {p.row.name}
      </Link>
    ),
  },
  { field: 'project', headerName: 'Project', width: 110 },
  { field: 'queue', headerName: 'Queue', width: 100 },
  {
    field: 'state',
    headerName: 'State',
    width: 130,
    renderCell: (p) => <Chip size="small" label={p.row.state} color={SERVICE_STATE_COLOR[p.row.state]} />,
  },
  {
    field: 'replicas',
    headerName: 'Ready / desired',
    width: 125,
    valueGetter: (_v, r) => `${r.readyReplicas}/${r.desiredReplicas}`,
    sortComparator: (a: string, b: string) => parseInt(a, 10) - parseInt(b, 10),
  },
  { field: 'bounds', headerName: 'Min–max', width: 95, valueGetter: (_v, r) => `${r.minReplicas}–${r.maxReplicas}` },
  { field: 'revision', headerName: 'Revision', type: 'number', width: 85 },
  { field: 'image', headerName: 'Image', flex: 1, minWidth: 180, valueGetter: (_v, r) => r.image ?? '' },
  {
    field: 'autoscaling',
    headerName: 'Autoscaling',
    flex: 1,
    minWidth: 200,
    valueGetter: (_v, r) => autoscalingSummary(r.autoscaling),
  },
  { field: 'condition', headerName: 'Condition', flex: 1, minWidth: 160, valueGetter: (_v, r) => r.condition ?? '' },
];

/** Refetches on every job event of one project (a service's replicas are its jobs). */
function FollowProject({ projectId, refetch }: { projectId: string; refetch: () => void }) {
  useRefetchOn(ProjectJobEventsSubscription, { projectId }, false, refetch, 1000);
  return null;
}

export function ServicesPage() {
  const [res, reexecute] = useQuery({ query: ServicesQuery, variables: {} });
  const [projects] = useQuery({ query: ProjectsQuery });
  const services = useMemo(() => res.data?.services ?? [], [res.data]);
  const refetch = () => reexecute({ requestPolicy: 'network-only' });
  // Live: the job events of each project with a service (replicas start, stop, move).
  const followed = useMemo(() => {
    const slugs = new Set(services.map((s) => s.project));
    return (projects.data?.projects ?? []).filter((p) => slugs.has(p.slug)).map((p) => p.id);
  }, [services, projects.data]);

  const newService = (
    <Button component={RouterLink} to="/services/new" variant="contained">
      New service
    </Button>
  );
  return (
    <Box>
      {followed.map((id) => (
        <FollowProject key={id} projectId={id} refetch={refetch} />
      ))}
      <Stack direction="row" spacing={2} alignItems="center" sx={{ mb: 2 }}>
        <Typography variant="h5" component="h1" sx={{ flexGrow: 1 }}>
          Services
        </Typography>
        <Button onClick={refetch} disabled={res.fetching}>
          Refresh
        </Button>
        {newService}
      </Stack>
      {res.error && !res.data ? (
        <ErrorState error={res.error} onRetry={refetch} />
      ) : !res.data ? (
        <Loading label="Loading services" />
      ) : services.length === 0 ? (
        <Empty title="No services yet">
          <Typography sx={{ my: 1 }}>
            An inference service keeps replicas of a server running and scales them. Create one with{' '}
            <Box component="code" sx={{ fontFamily: 'monospace' }}>
              grus service apply -f svc.yaml
            </Box>{' '}
            or with the form.
          </Typography>
          {newService}
        </Empty>
      ) : (
        <DataGrid
          {...gridEnvProps}
          aria-label="Services"
          rows={services}
          columns={columns}
          autoHeight
          density="compact"
          disableRowSelectionOnClick
          slots={{ toolbar: GridToolbar }}
          slotProps={{
            toolbar: { showQuickFilter: true, csvOptions: { fileName: 'grus-services' }, printOptions: { disableToolbarButton: true } },
          }}
          pageSizeOptions={[25, 50, 100]}
          initialState={{ pagination: { paginationModel: { pageSize: 25 } } }}
          localeText={{ noRowsLabel: 'No services match' }}
        />
      )}
    </Box>
  );
}
