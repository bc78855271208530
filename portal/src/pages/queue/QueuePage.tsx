import { Alert, Box, Chip, FormControlLabel, Link, Stack, Switch, Typography } from '@mui/material';
import { DataGrid, type GridColDef } from '@mui/x-data-grid';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Link as RouterLink, useSearchParams } from 'react-router-dom';
import { createRequest, useClient, useQuery } from 'urql';
import type { CombinedError, OperationResult } from 'urql';
import { pipe, take, toPromise } from 'wonka';
import { READINGS_MS, useReadEvery } from '../../api/live';
import { MeQuery, WaitingJobsQuery } from '../../api/operations';
import { fromNow, stateColor, WAITING_STATES } from '../../components/format';
import { gridEnvProps } from '../../components/grid';
import { Empty, ErrorState, Loading } from '../../components/states';
import { useNow } from '../../components/useNow';
import type { WaitingJobsQuery as WaitingJobsData, WaitingJobsQueryVariables } from '../../gql/graphql';

// A page costs `first` times its selection against the API's complexity limit.
const PAGE = 100;
/** Most pages one reading of the queue fetches: the line stays whole up to 2,000 jobs. */
export const MAX_PAGES = 20;

type Waiting = WaitingJobsData['jobs']['nodes'][number];
type Filter = NonNullable<WaitingJobsQueryVariables['filter']>;

interface WaitingRead {
  jobs: Waiting[] | null;
  /** More jobs wait than one reading fetches ([`MAX_PAGES`] pages). */
  truncated: boolean;
  error: CombinedError | null;
}

/**
 * Every waiting job `filter` selects, page after page (the API answers newest first, and the
 * line's heads are its oldest jobs: one page would leave out exactly those), read again every
 * 10 s. A reading that a newer filter overtook, or that outlived the page, is dropped; a tick
 * that finds a reading of the same filter still under way lets it finish (a long line may take
 * longer than a tick to read). Rows of another filter are never shown: switching shows Loading.
 */
function useWaitingJobs(filter: Filter, pause: boolean): WaitingRead & { refetch: () => void } {
  const client = useClient();
  const key = JSON.stringify(filter);
  const [read, setRead] = useState<WaitingRead & { key: string | null }>({ key: null, jobs: null, truncated: false, error: null });
  const generation = useRef(0);
  const reading = useRef<string | null>(null);
  const readAll = useCallback(
    (force: boolean) => {
      if (!force && reading.current === key) return;
      const mine = ++generation.current;
      reading.current = key;
      void (async () => {
        const jobs: Waiting[] = [];
        let after: string | null = null;
        let truncated = true;
        for (let page = 0; page < MAX_PAGES; page++) {
          const variables: WaitingJobsQueryVariables = { filter: JSON.parse(key) as Filter, first: PAGE, after };
          const request = createRequest(WaitingJobsQuery, variables);
          const r: OperationResult<WaitingJobsData, WaitingJobsQueryVariables> = await pipe(
            client.executeQuery(request, { requestPolicy: 'network-only' }),
            take(1),
            toPromise,
          );
          if (mine !== generation.current) return;
          if (r.error || !r.data) {
            reading.current = null;
            const error = r.error ?? null;
            setRead((prev) => (prev.key === key ? { ...prev, error } : { key, jobs: null, truncated: false, error }));
            return;
          }
          jobs.push(...r.data.jobs.nodes);
          const { hasNextPage, endCursor } = r.data.jobs.pageInfo;
          if (!hasNextPage || !endCursor) {
            truncated = false;
            break;
          }
          after = endCursor;
        }
        reading.current = null;
        setRead({ key, jobs, truncated, error: null });
      })();
    },
    [client, key],
  );
  useEffect(() => {
    if (pause) return undefined;
    readAll(true);
    return () => {
      // A filter change, a pause or leaving the page: what is under way is for nobody.
      generation.current++;
      reading.current = null;
    };
  }, [readAll, pause]);
  useReadEvery(() => readAll(false), READINGS_MS, pause);
  const mine = read.key === key;
  return {
    jobs: mine ? read.jobs : null,
    truncated: mine && read.truncated,
    error: mine ? read.error : null,
    refetch: () => readAll(true),
  };
}

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
 * caller's. Read again every 10 s, whole (every page, up to [`MAX_PAGES`]).
 */
export function QueuePage() {
  const [params, setParams] = useSearchParams();
  const mine = params.get('mine') === '1';
  const now = useNow(READINGS_MS);
  const [me] = useQuery({ query: MeQuery });
  const userId = me.data?.me.id;
  const filter = { states: [...WAITING_STATES], ...(mine && userId ? { userId } : {}) };
  const res = useWaitingJobs(filter, mine && !userId);
  const { refetch } = res;
  const rows = useMemo(() => queueRows(res.jobs ?? []), [res.jobs]);
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
      {res.error && res.jobs && (
        <Alert severity="warning" sx={{ mb: 1 }}>
          Could not read the queue again ({res.error.message}); showing the last reading.
        </Alert>
      )}
      {res.error && !res.jobs ? (
        <ErrorState error={res.error} onRetry={refetch} />
      ) : !res.jobs ? (
        <Loading label="Loading the queue" />
      ) : rows.length === 0 ? (
        <Empty title={mine ? 'None of your jobs is waiting' : 'No job is waiting'} />
      ) : (
        <>
          <DataGrid {...gridEnvProps} aria-label="Waiting jobs" rows={rows} columns={columns} autoHeight density="compact" hideFooter={rows.length <= 25} pageSizeOptions={[25, 50, 100]} />
          {res.truncated && (
            <Alert severity="warning" sx={{ mt: 1 }}>
              More than {rows.length.toLocaleString()} jobs wait: these are the newest, and the line's oldest are not shown. Narrow it with "Only my jobs", or see a project's
              queues on its page.
            </Alert>
          )}
        </>
      )}
    </Box>
  );
}
