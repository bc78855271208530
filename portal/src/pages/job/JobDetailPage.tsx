import { Alert } from '@mui/material';
import { useParams } from 'react-router-dom';
import { useMutation, useQuery } from 'urql';
import { CancelJobMutation, JobQuery } from '../../api/operations';
import { usePoll } from '../../api/usePoll';
import { TERMINAL_STATES } from '../../components/format';
import { errorText, ErrorState, Loading } from '../../components/states';
import { JobDetailView } from './JobDetailView';

export function JobDetailPage() {
  const { id = '' } = useParams();
  const [res, reexecute] = useQuery({ query: JobQuery, variables: { id } });
  const [cancel, cancelJob] = useMutation(CancelJobMutation);
  const job = res.data?.job;
  // Live until the job ends (subscriptions replace this when the server has them).
  usePoll(reexecute, 3000, !job || !TERMINAL_STATES.includes(job.state));

  if (res.fetching && !res.data) return <Loading label="Loading the job" />;
  if (res.error && !job) {
    return <ErrorState error={res.error} onRetry={() => reexecute({ requestPolicy: 'network-only' })} />;
  }
  if (!job) return <ErrorState error="No such job" />;
  return (
    <>
      {cancel.error && (
        <Alert severity="error" sx={{ mb: 2 }}>
          Cancel failed: {errorText(cancel.error)}
        </Alert>
      )}
      <JobDetailView
        job={job}
        cancelling={cancel.fetching}
        onCancel={() => {
          void cancelJob({ id: job.id }).then(() => reexecute({ requestPolicy: 'network-only' }));
        }}
      />
    </>
  );
}
