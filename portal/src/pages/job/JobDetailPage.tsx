import { Alert } from '@mui/material';
import { useLocation, useParams } from 'react-router-dom';
import { useMutation, useQuery } from 'urql';
import { READINGS_MS, useReadEvery, useRefetchOn } from '../../api/live';
import {
  CancelJobMutation,
  JobEventsSubscription,
  JobQuery,
  ProjectJobEventsSubscription,
  ResumeJobMutation,
  SetJobPriorityMutation,
  SuspendJobMutation,
} from '../../api/operations';
import { TERMINAL_STATES } from '../../components/format';
import { errorCode, errorText, ErrorState, Loading, NotFound } from '../../components/states';
import { JobDetailView } from './JobDetailView';
import { MetricHistoryCard } from '../../components/MetricHistoryCard';
import { LogViewer } from './LogViewer';
import { JobCost } from '../../components/WorkloadCost';

export function JobDetailPage() {
  const { id = '' } = useParams();
  // What the submit page had to say (a budget past its warning threshold), once.
  const notice = (useLocation().state as { notice?: string } | null)?.notice;
  const [res, reexecute] = useQuery({ query: JobQuery, variables: { id } });
  const [cancel, cancelJob] = useMutation(CancelJobMutation);
  const [priority, setJobPriority] = useMutation(SetJobPriorityMutation);
  const [suspension, suspendJob] = useMutation(SuspendJobMutation);
  const [resumption, resumeJob] = useMutation(ResumeJobMutation);
  const job = res.data?.job;
  const refetch = () => reexecute({ requestPolicy: 'network-only' });
  // Live: each event of the job (state changes of the job, its tasks and replicas) refetches it.
  useRefetchOn(JobEventsSubscription, { jobId: id }, !job, refetch);
  // While it waits its place in line moves with the other jobs of its project (one starts,
  // ends or leaves the queue): their events refetch it too.
  useRefetchOn(ProjectJobEventsSubscription, { projectId: job?.projectId ?? '' }, job?.queuePosition == null, refetch);
  // Its replicas' resource and GPU readings change without an event while it runs (and a page
  // that has not yet seen it start must not wait for an event to start reading them).
  useReadEvery(refetch, READINGS_MS, !job || TERMINAL_STATES.includes(job.state));

  if (res.fetching && !res.data) return <Loading label="Loading the job" />;
  if (res.error && errorCode(res.error) === 'NOT_FOUND') return <NotFound what="job" />;
  if (res.error && !job) return <ErrorState error={res.error} onRetry={refetch} />;
  if (!job) return <NotFound what="job" />;
  const failed = cancel.error
    ? `Cancel failed: ${errorText(cancel.error)}`
    : priority.error
      ? `Priority not changed: ${errorText(priority.error)}`
      : suspension.error
        ? `Not suspended: ${errorText(suspension.error)}`
        : resumption.error
          ? `Not resumed: ${errorText(resumption.error)}`
          : null;
  return (
    <>
      {notice && (
        <Alert severity="warning" sx={{ mb: 2 }} data-testid="submit-notice">
          {notice}
        </Alert>
      )}
      {failed && (
        <Alert severity="error" sx={{ mb: 2 }}>
          {failed}
        </Alert>
      )}
      <JobDetailView
        job={job}
        cancelling={cancel.fetching}
        onCancel={() => void cancelJob({ id: job.id }).then(refetch)}
        onSetPriority={(p) => void setJobPriority({ id: job.id, priority: p }).then(refetch)}
        onSuspend={() => void suspendJob({ id: job.id }).then(refetch)}
        onResume={() => void resumeJob({ id: job.id }).then(refetch)}
        changing={suspension.fetching || resumption.fetching}
        cost={<JobCost id={job.id} changedAt={job.updatedAt} />}
        history={<MetricHistoryCard subject={{ job: job.id }} live={!TERMINAL_STATES.includes(job.state)} />}
        logs={<LogViewer jobId={job.id} tasks={job.tasks} live={!TERMINAL_STATES.includes(job.state)} changedAt={job.updatedAt} />}
      />
    </>
  );
}
