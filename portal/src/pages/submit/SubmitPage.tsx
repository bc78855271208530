import { Alert, Box, Button, Stack, Tab, Tabs, Typography } from '@mui/material';
import { useEffect, useMemo, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router-dom';
import { useMutation, useQuery } from 'urql';
import { DryRunJobMutation, ProjectsQuery, SubmitJobMutation } from '../../api/operations';
import { ProjectPicker } from '../../components/ProjectPicker';
import { Empty, errorText, ErrorState, Loading } from '../../components/states';
import { YamlEditor } from '../../components/YamlEditor';
import { formatResource } from '../../components/format';
import type { DryRunJobMutation as DryRun, JobInput } from '../../gql/graphql';
import { WhyPendingTable } from '../job/JobDetailView';
import type { FieldError, JobForm } from '../../jobs/jobInput';
import {
  emptyForm,
  formToJobInput,
  jobInputToForm,
  jobInputToYaml,
  serverFieldErrors,
  validateJobInput,
  yamlToJobInput,
} from '../../jobs/jobInput';
import { SubmitForm } from './SubmitForm';

type Mode = 'form' | 'yaml';

/** What a dry run says, as one sentence and its severity. */
export function dryRunSummary(r: DryRun['dryRunJob']): { severity: 'success' | 'warning' | 'error'; text: string } {
  if (!r.admitted) {
    const q = r.quotaExceeded;
    return {
      severity: 'error',
      text: q
        ? `Admission would refuse it: queue ${q.queue} at its ${q.resource} limit (${formatResource(q.resource, q.used)} used + ${formatResource(q.resource, q.demand)} asked > ${formatResource(q.resource, q.limit)}).`
        : 'Admission would refuse it.',
    };
  }
  const borrowed = r.borrowed ? ' above the queue\'s guarantee (borrowed, preemptible)' : '';
  if (r.cluster) return { severity: 'success', text: `Would be admitted${borrowed} and dispatched to ${r.cluster} now.` };
  return { severity: 'warning', text: `Would be admitted${borrowed}, but no cluster can take it now: ${r.whyPending?.summary ?? 'no reason given'}` };
}

/** The JobInput the active editor holds, with every error the client can find. */
export function currentInput(mode: Mode, form: JobForm, yamlText: string): { input: JobInput | null; errors: FieldError[] } {
  if (mode === 'form') {
    const { input, errors } = formToJobInput(form);
    return { input, errors: [...errors, ...validateJobInput(input)] };
  }
  const { input, errors } = yamlToJobInput(yamlText);
  if (!input) return { input: null, errors };
  return { input, errors: validateJobInput(input) };
}

export function SubmitPage() {
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const [projects] = useQuery({ query: ProjectsQuery });
  const list = projects.data?.projects ?? [];
  const mode: Mode = params.get('mode') === 'yaml' ? 'yaml' : 'form';
  const slug = params.get('project') ?? list[0]?.slug ?? '';
  const [form, setForm] = useState<JobForm>(() => emptyForm(slug));
  const [yamlText, setYamlText] = useState('');
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [submitted, submit] = useMutation(SubmitJobMutation);
  const [dryRun, runDryRun] = useMutation(DryRunJobMutation);
  // The verdict with the input it judged: a form changed since shows no verdict (it would not
  // be about what is on screen).
  const [dry, setDry] = useState<{ input: string; result: DryRun['dryRunJob'] } | null>(null);
  const shownInput = useMemo(() => JSON.stringify(currentInput(mode, form, yamlText).input ?? null), [mode, form, yamlText]);
  const dryResult = dry && dry.input === shownInput ? dry.result : null;

  useEffect(() => {
    if (slug && form.project !== slug) setForm((f) => ({ ...f, project: slug }));
  }, [slug, form.project]);

  const setParam = (k: string, v: string) => {
    const next = new URLSearchParams(params);
    next.set(k, v);
    setParams(next, { replace: true });
  };

  const switchTo = (next: Mode) => {
    if (next === mode) return;
    if (next === 'yaml') {
      setYamlText(jobInputToYaml(formToJobInput(form).input));
      setErrors([]);
    } else {
      const { input, errors: errs } = yamlToJobInput(yamlText);
      if (!input) {
        setErrors(errs);
        return;
      }
      setForm(jobInputToForm(input));
      if (input.project && input.project !== slug) setParam('project', input.project);
      setErrors([]);
    }
    setParam('mode', next);
  };

  const onDryRun = async () => {
    setDry(null);
    const { input, errors: errs } = currentInput(mode, form, yamlText);
    setErrors(errs);
    if (!input || errs.length > 0) return;
    const res = await runDryRun({ input });
    if (res.error) {
      setErrors(serverFieldErrors(res.error.graphQLErrors[0]?.extensions));
      return;
    }
    if (res.data) setDry({ input: JSON.stringify(input), result: res.data.dryRunJob });
  };

  const onSubmit = async () => {
    const { input, errors: errs } = currentInput(mode, form, yamlText);
    setErrors(errs);
    if (!input || errs.length > 0) return;
    const res = await submit({ input });
    if (res.error) {
      setErrors(serverFieldErrors(res.error.graphQLErrors[0]?.extensions));
      return;
    }
    if (res.data) {
      const notice = res.data.submitJob.budgetWarning;
      navigate(`/jobs/${res.data.submitJob.job.id}`, notice ? { state: { notice } } : undefined);
    }
  };

  if (projects.fetching && !projects.data) return <Loading label="Loading projects" />;
  if (projects.error) return <ErrorState error={projects.error} />;
  if (list.length === 0) return <Empty title="No projects yet">You need a project to submit jobs.</Empty>;
  const queues = list.find((p) => p.slug === slug)?.queues.map((q) => q.name) ?? [];

  return (
    <Box component="form" noValidate onSubmit={(e) => (e.preventDefault(), void onSubmit())} aria-label="Submit a job">
      <Stack direction="row" spacing={2} alignItems="center" sx={{ mb: 2 }}>
        <Typography variant="h5" component="h1">
          Submit a job
        </Typography>
        {mode === 'form' && (
          <ProjectPicker projects={list} value={slug} onChange={(s) => setParam('project', s)} id="submit-project" />
        )}
      </Stack>
      <Tabs value={mode} onChange={(_e, v: Mode) => switchTo(v)} aria-label="Editor" sx={{ mb: 2 }}>
        <Tab value="form" label="Form" />
        <Tab value="yaml" label="YAML" />
      </Tabs>
      {errors.length > 0 && (
        <Alert severity="error" sx={{ mb: 2 }} role="alert">
          {errors.length} problem{errors.length === 1 ? '' : 's'}:{' '}
          {errors.map((e) => `${e.field}: ${e.message}`).join('; ')}
        </Alert>
      )}
      {[submitted.error, dryRun.error].map(
        (err, i) =>
          err &&
          serverFieldErrors(err.graphQLErrors[0]?.extensions).length === 0 && (
            <Alert key={i} severity="error" sx={{ mb: 2 }}>
              {errorText(err)}
            </Alert>
          ),
      )}
      {mode === 'form' ? (
        <SubmitForm form={form} onChange={setForm} errors={errors} queues={queues} />
      ) : (
        <YamlEditor value={yamlText} onChange={setYamlText} label="Job YAML" />
      )}
      {dryResult && (
        <Alert severity={dryRunSummary(dryResult).severity} sx={{ mt: 2 }} data-testid="dry-run" onClose={() => setDry(null)}>
          {dryRunSummary(dryResult).text}
          {dryResult.whyPending && <WhyPendingTable reasons={dryResult.whyPending.reasons} />}
        </Alert>
      )}
      <Stack direction="row" spacing={2} sx={{ mt: 3 }}>
        <Button variant="outlined" disabled={dryRun.fetching} onClick={() => void onDryRun()}>
          {dryRun.fetching ? 'Checking…' : 'Dry run'}
        </Button>
        <Button type="submit" variant="contained" disabled={submitted.fetching}>
          {submitted.fetching ? 'Submitting…' : 'Submit'}
        </Button>
      </Stack>
    </Box>
  );
}
