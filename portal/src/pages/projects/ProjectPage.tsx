import { Alert, Box, Button, Chip, FormControlLabel, Grid, Stack, Switch, TextField, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import type { FormEvent } from 'react';
import { Link as RouterLink, useNavigate, useParams } from 'react-router-dom';
import { useMutation, useQuery } from 'urql';
import {
  AddMemberMutation,
  CreateQueueMutation,
  DeleteProjectMutation,
  DeleteQueueMutation,
  ProjectQuery,
  RemoveBudgetMutation,
  SetBudgetMutation,
  SetProjectShareMutation,
  UpdateQuotaMutation,
} from '../../api/operations';
import { BudgetCard } from '../../components/BudgetCard';
import { useCurrentProject } from '../../auth/context';
import { ROLE_LABEL, ROLE_RANK } from '../../components/format';
import { ShareForm, shareText } from '../../components/ShareForm';
import { errorCode, errorText, ErrorState, Loading, NotFound } from '../../components/states';
import type { QueueFieldsFragment } from '../../gql/graphql';
import { ClassOfServiceForm, QueueSelect } from './ClassOfServiceForm';
import { MembersPanel } from './MembersPanel';
import { QueueCard } from './QueueCard';
import { fromStoredAmount, quotaUnit, toStoredAmount } from './quotaUnits';
import { ConfirmButton } from '../../components/ConfirmButton';

export function QueueAdmin({ projectId, queues, onDone }: { projectId: string; queues: QueueFieldsFragment[]; onDone: () => void }) {
  const [, createQueue] = useMutation(CreateQueueMutation);
  const [, updateQuota] = useMutation(UpdateQuotaMutation);
  const [name, setName] = useState('');
  const [weight, setWeight] = useState('1');
  const [canBorrow, setCanBorrow] = useState(true);
  const [queueId, setQueueId] = useState(queues[0]?.id ?? '');
  const [resource, setResource] = useState('gpu');
  const [guaranteed, setGuaranteed] = useState('');
  const [limit, setLimit] = useState('');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  const addQueue = async (e: FormEvent) => {
    e.preventDefault();
    const w = Number(weight);
    if (!name.trim() || !(w > 0)) return setMessage({ ok: false, text: 'A queue needs a name and a positive weight' });
    const r = await createQueue({ projectId, name: name.trim(), weight: w, canBorrow });
    setMessage(r.error ? { ok: false, text: errorText(r.error) } : { ok: true, text: `Queue ${name} created` });
    if (!r.error) {
      setName('');
      onDone();
    }
  };
  const setQuota = async (e: FormEvent) => {
    e.preventDefault();
    const g = toStoredAmount(guaranteed, resource);
    if ('error' in g) return setMessage({ ok: false, text: `Guaranteed: ${g.error}` });
    const l = limit.trim() === '' ? null : toStoredAmount(limit, resource);
    if (l && 'error' in l) return setMessage({ ok: false, text: `Limit: ${l.error}` });
    const r = await updateQuota({ queueId, resource, guaranteed: g.amount, limit: l ? l.amount : null });
    const set = `${fromStoredAmount(g.amount, resource)} guaranteed, limit ${l ? fromStoredAmount(l.amount, resource) : 'none'}`;
    setMessage(r.error ? { ok: false, text: errorText(r.error) } : { ok: true, text: `Quota ${resource} set: ${set}` });
    if (!r.error) onDone();
  };
  return (
    <Box sx={{ mt: 3 }}>
      <Typography variant="h6" component="h2">
        Manage queues
      </Typography>
      <Stack component="form" aria-label="Create a queue" direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ mt: 1 }} onSubmit={(e) => void addQueue(e)}>
        <TextField size="small" label="Queue name" value={name} onChange={(e) => setName(e.target.value)} />
        <TextField size="small" label="Weight" value={weight} onChange={(e) => setWeight(e.target.value)} sx={{ width: 100 }} />
        <FormControlLabel control={<Switch checked={canBorrow} onChange={(e) => setCanBorrow(e.target.checked)} />} label="Can borrow" />
        <Button type="submit" variant="outlined">
          Create queue
        </Button>
      </Stack>
      <Stack component="form" aria-label="Set a quota" direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ mt: 2 }} onSubmit={(e) => void setQuota(e)}>
        <QueueSelect queues={queues} value={queueId} onChange={setQueueId} />
        <TextField
          size="small"
          label="Resource"
          value={resource}
          onChange={(e) => setResource(e.target.value)}
          helperText="gpu, gpu/<model>, pool/<node pool>, cpu_milli, memory_mib"
        />
        <TextField
          size="small"
          label={`Guaranteed (${quotaUnit(resource).unit})`}
          value={guaranteed}
          onChange={(e) => setGuaranteed(e.target.value)}
          helperText={`in ${quotaUnit(resource).unit}, e.g. 8 or 0.5`}
        />
        <TextField
          size="small"
          label={`Limit (${quotaUnit(resource).unit})`}
          value={limit}
          onChange={(e) => setLimit(e.target.value)}
          helperText="empty: no limit"
        />
        <Button type="submit" variant="outlined" sx={{ alignSelf: 'flex-start' }}>
          Set quota
        </Button>
      </Stack>
      <ClassOfServiceForm
        queues={queues}
        onDone={(m) => {
          setMessage(m);
          if (m.ok) onDone();
        }}
      />
      {message && (
        <Alert severity={message.ok ? 'success' : 'error'} sx={{ mt: 1 }} onClose={() => setMessage(null)}>
          {message.text}
        </Alert>
      )}
    </Box>
  );
}

export function ProjectPage() {
  const { slug = '' } = useParams();
  const [res, reexecute] = useQuery({ query: ProjectQuery, variables: { slug } });
  const [, addMember] = useMutation(AddMemberMutation);
  const [, setProjectShare] = useMutation(SetProjectShareMutation);
  const [, setBudget] = useMutation(SetBudgetMutation);
  const [, removeBudget] = useMutation(RemoveBudgetMutation);
  const [, deleteQueue] = useMutation(DeleteQueueMutation);
  const [, deleteProject] = useMutation(DeleteProjectMutation);
  const [problem, setProblem] = useState<string | null>(null);
  const navigate = useNavigate();
  const { setCurrent } = useCurrentProject();
  const project = res.data?.project;

  useEffect(() => {
    setCurrent(project ? { slug: project.slug, role: project.myRole } : null);
    return () => setCurrent(null);
  }, [project, setCurrent]);

  if (res.fetching && !res.data) return <Loading label="Loading the project" />;
  if ((res.error && errorCode(res.error) === 'NOT_FOUND') || (!res.error && !project)) return <NotFound what="project" />;
  if (res.error || !project) {
    return <ErrorState error={res.error ?? 'No such project'} onRetry={() => reexecute({ requestPolicy: 'network-only' })} />;
  }
  const isAdmin = ROLE_RANK[project.myRole] >= ROLE_RANK.PROJECT_ADMIN;
  const isTenantAdmin = ROLE_RANK[project.myRole] >= ROLE_RANK.TENANT_ADMIN;
  const refresh = () => reexecute({ requestPolicy: 'network-only' });

  return (
    <Box>
      <Stack direction="row" spacing={2} alignItems="center" sx={{ mb: 2, flexWrap: 'wrap', rowGap: 1 }}>
        <Typography variant="h5" component="h1">
          {project.name}
        </Typography>
        <Chip label={project.slug} variant="outlined" />
        <Chip label={`you: ${ROLE_LABEL[project.myRole]}`} />
        <Box sx={{ flexGrow: 1 }} />
        <Button component={RouterLink} to={`/jobs?project=${encodeURIComponent(project.slug)}`}>
          Jobs
        </Button>
        <Button component={RouterLink} to={`/submit?project=${encodeURIComponent(project.slug)}`} variant="contained">
          Submit a job
        </Button>
        {isTenantAdmin && (
          <ConfirmButton
            color="error"
            title={`Delete project ${project.slug}?`}
            text="Its queues, members, shares and budget go with it. A project that holds jobs or services cannot be deleted."
            confirmLabel="Delete project"
            onConfirm={() =>
              void deleteProject({ projectId: project.id }).then((r) => {
                if (r.error) setProblem(errorText(r.error));
                else navigate('/projects');
              })
            }
          >
            Delete project
          </ConfirmButton>
        )}
      </Stack>
      {problem && (
        <Alert severity="error" sx={{ mb: 2 }} onClose={() => setProblem(null)}>
          {problem}
        </Alert>
      )}
      <Typography variant="h6" component="h2" sx={{ mb: 1 }}>
        Fair share
      </Typography>
      <Typography color="text.secondary">
        Among its tenant&apos;s projects: {shareText(project.share)}. Capacity above guarantees is shared by weight: tenants first,
        then projects, then queues; a limit bounds what the project&apos;s queues together are admitted for.
      </Typography>
      {isTenantAdmin && (
        <ShareForm
          key={JSON.stringify(project.share)}
          label="Project fair share"
          share={project.share}
          onSave={async (change) => {
            const r = await setProjectShare({ projectId: project.id, ...change });
            if (!r.error) refresh();
            return r.error ? errorText(r.error) : null;
          }}
        />
      )}
      <BudgetCard
        key={project.id}
        title="Monthly budget"
        budget={project.budget}
        onSave={
          isTenantAdmin
            ? async (change) => {
                const r = await setBudget({ projectId: project.id, ...change });
                if (!r.error) refresh();
                return r.error ? errorText(r.error) : null;
              }
            : undefined
        }
        onRemove={
          isTenantAdmin
            ? async () => {
                const r = await removeBudget({ projectId: project.id });
                if (!r.error) refresh();
                return r.error ? errorText(r.error) : null;
              }
            : undefined
        }
      />
      <Typography variant="h6" component="h2" sx={{ mt: 3, mb: 1 }}>
        Queues
      </Typography>
      <Grid container spacing={2}>
        {project.queues.map((q) => (
          <Grid item xs={12} md={6} key={q.id}>
            <QueueCard
              queue={q}
              onDelete={
                isAdmin
                  ? () =>
                      void deleteQueue({ queueId: q.id }).then((r) => {
                        if (r.error) setProblem(errorText(r.error));
                        else refresh();
                      })
                  : undefined
              }
            />
          </Grid>
        ))}
      </Grid>
      {isAdmin && <QueueAdmin projectId={project.id} queues={project.queues} onDone={refresh} />}
      <Typography variant="h6" component="h2" sx={{ mt: 3, mb: 1 }}>
        Members
      </Typography>
      <MembersPanel
        members={project.members}
        canManage={isAdmin}
        onAdd={async (subject, role) => {
          const r = await addMember({ projectId: project.id, subject, role });
          if (!r.error) refresh();
          return r.error ? errorText(r.error) : null;
        }}
      />
    </Box>
  );
}
