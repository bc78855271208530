import { Box, Chip, FormControlLabel, Link, Stack, Switch, Typography } from '@mui/material';
import { DataGrid, type GridColDef } from '@mui/x-data-grid';
import { useMemo } from 'react';
import { Link as RouterLink, useSearchParams } from 'react-router-dom';
import { useQuery } from 'urql';
import { READINGS_MS, useReadEvery } from '../../api/live';
import { MeQuery, WaitingJobsQuery } from '../../api/operations';
import { fromNow, stateColor, WAITING_STATES } from '../../components/format';
import { gridEnvProps } from '../../components/grid';
import { Empty, ErrorState, Loading } from '../../components/states';
import { useNow } from '../../components/useNow';
import type { WaitingJobsQuery as WaitingJobsData } from '../../gql/graphql';

// A page costs `first` times its selection against the API's complexity limit.
const PAGE = 100;

type Waiting = WaitingJobsData['jobs']['nodes'][number];

export interface QueueRow {
  id: string;
  name: string;
  state: string;
  project: string;
  queue: string;
  position: number | null;
  priorityClass: string;
  owner: string;
  submittedAt: string;
}

/** The waiting jobs as the line reads: by project, then queue, then place in the queue. */
export function queueRows(jobs: readonly Waiting[]): QueueRow[] {
  return jobs
    .map((j) => ({
      id: j.id,
      name: j.name,
      state: j.state,
      project: j.projectSlug,
      queue: j.queueName,
      position: j.queuePosition ?? null,
      priorityClass: j.priorityClass,
      owner: j.ownerSubject,
      submittedAt: j.submittedAt,
    }))
    .sort(
      (a, b) =>
        a.project.localeCompare(b.project) ||
        a.queue.localeCompare(b.queue) ||
        (a.position ?? Number.MAX_SAFE_INTEGER) - (b.position ?? Number.MAX_SAFE_INTEGER),
    );
}

/**
 * Every job waiting to start that the caller can see (platform admins: the whole fleet),
 * with its place in its queue and how long it has waited; "Only my jobs" narrows it to the
 * caller's. Read again every 10 s.
 */
export function QueuePage() {
  const [params, setParams] = useSearchParams();
  const mine = params.get('mine') === '1';
  const now = useNow(READINGS_MS);
  const [me] = useQuery({ query: MeQuery });
  const userId = me.data?.me.id;
  const filter = { states: [...WAITING_STATES], ...(mine && userId ? { userId } : {}) };
  const [res, reexecute] = useQuery({ query: WaitingJobsQuery, variables: { filter, first: PAGE }, pause: mine && !userId });
  const refetch = () => reexecute({ requestPolicy: 'network-only' });
  useReadEvery(refetch, READINGS_MS);
  const rows = useMemo(() => queueRows(res.data?.jobs.nodes ?? []), [res.data]);
  const columns: GridColDef<QueueRow>[] = [
    { field: 'project', headerName: 'Project', width: 130 },
    { field: 'queue', headerName: 'Queue', width: 120 },
    { field: 'position', headerName: 'Position', type: 'number', width: 90, valueFormatter: (v: number | null) => (v == null ? '—' : `#${v}`) },
    {
      field: 'name',
      headerName: 'Job',
      flex: 1,
      minWidth: 160,
      renderCell: ({ row }) => (
        <Link component={RouterLink} to={`/jobs/${row.id}`}>
          {row.name}
        </Link>
      ),
    },
    {
      field: 'state',
      headerName: 'State',
      width: 130,
      renderCell: ({ row }) => <Chip size="small" color={stateColor(row.state)} label={row.state.toLowerCase()} />,
    },
    { field: 'priorityClass', headerName: 'Priority', width: 100 },
    { field: 'owner', headerName: 'Owner', width: 150 },
    {
      field: 'submittedAt',
      headerName: 'Waiting since',
      width: 150,
      valueFormatter: (v: string) => fromNow(v, now),
    },
  ];
  return (
    <Box>
      <Stack direction="row" spacing={2} alignItems="center" sx={{ mb: 2 }}>
        <Typography variant="h5" component="h1">
          Queue
        </Typography>
        <Box sx={{ flexGrow: 1 }} />
        <FormControlLabel
          control={
            <Switch
              checked={mine}
              onChange={(e) => {
                const next = new URLSearchParams(params);
                if (e.target.checked) next.set('mine', '1');
                else next.delete('mine');
                setParams(next, { replace: true });
              }}
            />
          }
          label="Only my jobs"
        />
      </Stack>
      <Typography color="text.secondary" sx={{ mb: 2 }}>
        Jobs waiting to start in every project you can see, in the order each queue serves them (priority, then workspaces, then age).
      </Typography>
      {res.error ? (
        <ErrorState error={res.error} onRetry={refetch} />
      ) : !res.data ? (
        <Loading label="Loading the queue" />
      ) : rows.length === 0 ? (
        <Empty title={mine ? 'None of your jobs is waiting' : 'No job is waiting'} />
      ) : (
        <DataGrid {...gridEnvProps} aria-label="Waiting jobs" rows={rows} columns={columns} autoHeight density="compact" hideFooter={rows.length <= 25} pageSizeOptions={[25, 50, 100]} />
      )}
    </Box>
  );
}
