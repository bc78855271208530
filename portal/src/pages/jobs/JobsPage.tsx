import {
  Alert,
  Box,
  Button,
  Checkbox,
  FormControl,
  InputLabel,
  ListItemText,
  MenuItem,
  Select,
  Stack,
  Typography,
} from '@mui/material';
import type { GridRowSelectionModel } from '@mui/x-data-grid';
import { useEffect, useMemo, useState } from 'react';
import { Link as RouterLink, useSearchParams } from 'react-router-dom';
import { useMutation, useQuery } from 'urql';
import { useRefetchOn } from '../../api/live';
import { CancelJobMutation, ProjectJobEventsSubscription, ProjectJobsQuery, ProjectsQuery } from '../../api/operations';
import { useCurrentProject } from '../../auth/context';
import { JOB_STATES, TERMINAL_STATES } from '../../components/format';
import { ProjectPicker } from '../../components/ProjectPicker';
import { Empty, ErrorState, Loading } from '../../components/states';
import type { JobState } from '../../gql/graphql';
import type { GridView, JobRow } from './JobsTable';
import { JobsTable, viewFromParams, viewToParams } from './JobsTable';
import { ConfirmButton } from '../../components/ConfirmButton';

// A page costs `first` times its selection against the API's complexity limit (5000).
const PAGE = 100;

export function JobsPage() {
  const [params, setParams] = useSearchParams();
  const [projects] = useQuery({ query: ProjectsQuery });
  const projectList = projects.data?.projects ?? [];
  const slug = params.get('project') ?? projectList[0]?.slug ?? '';
  const states = (params.get('state') ?? '').split(',').filter((s): s is JobState => JOB_STATES.includes(s as JobState));
  const filter = states.length ? { states } : null;
  const [jobs, reexecute] = useQuery({
    query: ProjectJobsQuery,
    variables: { slug, filter, first: PAGE },
    pause: !slug,
  });
  const [cancelState, cancelJob] = useMutation(CancelJobMutation);
  const [selection, setSelection] = useState<GridRowSelectionModel>([]);
  const [cancelErrors, setCancelErrors] = useState<string[]>([]);
  const { setCurrent } = useCurrentProject();
  const project = jobs.data?.project;
  // Live: every job event of the project refetches the page of jobs.
  useRefetchOn(ProjectJobEventsSubscription, { projectId: project?.id ?? '' }, !project, () =>
    reexecute({ requestPolicy: 'network-only' }),
  );

  useEffect(() => {
    setCurrent(project ? { slug: project.slug, role: project.myRole } : null);
    return () => setCurrent(null);
  }, [project, setCurrent]);

  const rows: JobRow[] = useMemo(() => {
    const queues = new Map((project?.queues ?? []).map((q) => [q.id, q.name]));
    return (project?.jobs.nodes ?? []).map((j) => ({
      id: j.id,
      name: j.name,
      state: j.state,
      queue: queues.get(j.queueId) ?? j.queueId,
      priorityClass: j.priorityClass,
      priority: j.priority,
      preemptible: j.preemptible,
      borrowed: j.borrowed,
      submittedBy: j.submitter.subject,
      submittedAt: j.submittedAt,
      updatedAt: j.updatedAt,
      clusterId: j.clusterId ?? null,
      tasks: j.tasks.length,
      replicas: j.tasks.reduce((n, t) => n + t.replicaCount, 0),
    }));
  }, [project]);

  const view = viewFromParams(params);
  const setView = (v: GridView) => setParams(viewToParams(v, params), { replace: true });
  const setParam = (k: string, v: string) => {
    const next = new URLSearchParams(params);
    if (v) next.set(k, v);
    else next.delete(k);
    setParams(next);
  };

  const cancelSelected = async () => {
    const errs: string[] = [];
    for (const id of selection) {
      const r = await cancelJob({ id: String(id) });
      if (r.error) errs.push(`job ${id}: ${r.error.graphQLErrors[0]?.message ?? r.error.message}`);
    }
    setCancelErrors(errs);
    setSelection([]);
    reexecute({ requestPolicy: 'network-only' });
  };

  if (projects.fetching && !projects.data) return <Loading label="Loading projects" />;
  if (projects.error) return <ErrorState error={projects.error} />;
  if (projectList.length === 0) {
    return <Empty title="No projects yet">Ask a tenant admin to add you to a project.</Empty>;
  }

  return (
    <Box>
      <Stack direction="row" spacing={2} alignItems="center" sx={{ mb: 2, flexWrap: 'wrap' }}>
        <Typography variant="h5" component="h1" sx={{ mr: 2 }}>
          Jobs
        </Typography>
        <ProjectPicker projects={projectList} value={slug} onChange={(s) => setParam('project', s)} />
        <FormControl size="small" sx={{ minWidth: 220 }}>
          <InputLabel id="state-filter-label">States</InputLabel>
          <Select
            labelId="state-filter-label"
            multiple
            label="States"
            value={states}
            onChange={(e) => {
              const v = e.target.value;
              setParam('state', (typeof v === 'string' ? v.split(',') : v).join(','));
            }}
            renderValue={(v) => v.join(', ')}
          >
            {JOB_STATES.map((s) => (
              <MenuItem key={s} value={s}>
                <Checkbox checked={states.includes(s)} size="small" />
                <ListItemText primary={s} />
              </MenuItem>
            ))}
          </Select>
        </FormControl>
        <ConfirmButton
          variant="outlined"
          color="error"
          disabled={selection.length === 0 || cancelState.fetching}
          title={`Cancel ${selection.length} job${selection.length === 1 ? '' : 's'}?`}
          text="Their replicas are stopped; this cannot be undone."
          confirmLabel="Cancel jobs"
          onConfirm={() => void cancelSelected()}
        >
          Cancel selected ({selection.length})
        </ConfirmButton>
        <Button component={RouterLink} to={`/submit?project=${encodeURIComponent(slug)}`} variant="contained">
          Submit a job
        </Button>
      </Stack>
      {cancelErrors.length > 0 && (
        <Alert severity="error" sx={{ mb: 2 }} onClose={() => setCancelErrors([])}>
          {cancelErrors.join('; ')}
        </Alert>
      )}
      {jobs.error && !jobs.data ? (
        <ErrorState error={jobs.error} onRetry={() => reexecute({ requestPolicy: 'network-only' })} />
      ) : jobs.fetching && !jobs.data ? (
        <Loading label="Loading jobs" />
      ) : rows.length === 0 && !view.filter.items.length ? (
        <Empty title={states.length ? 'No jobs in these states' : 'No jobs in this project yet'}>
          <Button component={RouterLink} to={`/submit?project=${encodeURIComponent(slug)}`}>
            Submit the first one
          </Button>
        </Empty>
      ) : (
        <>
          <JobsTable
            rows={rows}
            loading={jobs.fetching && !jobs.data}
            view={view}
            onViewChange={setView}
            selection={selection}
            onSelectionChange={setSelection}
            canSelect={(r) => !TERMINAL_STATES.includes(r.state)}
          />
          {project?.jobs.pageInfo.hasNextPage && (
            <Typography variant="body2" sx={{ mt: 1 }} color="text.secondary">
              Showing the newest {PAGE} jobs; narrow the states to see older ones.
            </Typography>
          )}
        </>
      )}
    </Box>
  );
}
