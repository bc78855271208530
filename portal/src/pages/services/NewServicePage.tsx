import { Alert, Box, Button, Stack, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { Link as RouterLink, useNavigate, useSearchParams } from 'react-router-dom';
import { useMutation, useQuery } from 'urql';
import { ApplyServiceMutation, ProjectsQuery } from '../../api/operations';
import { ProjectPicker } from '../../components/ProjectPicker';
import { Empty, errorText, ErrorState, Loading } from '../../components/states';
import type { FieldError } from '../../jobs/jobInput';
import { serverFieldErrors } from '../../jobs/jobInput';
import type { ServiceForm as Form } from '../../services/serviceInput';
import { emptyServiceForm, formToServiceInput } from '../../services/serviceInput';
import { ServiceForm } from './ServiceForm';
import { servicePath } from './serviceFormat';

/** `/services/new?project=`: applies a service (a new one, or an update of one of that name). */
export function NewServicePage() {
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const [projects] = useQuery({ query: ProjectsQuery });
  const list = projects.data?.projects ?? [];
  const slug = params.get('project') ?? list[0]?.slug ?? '';
  const [form, setForm] = useState<Form>(() => emptyServiceForm(slug));
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [applied, apply] = useMutation(ApplyServiceMutation);

  useEffect(() => {
    if (slug && form.project !== slug) setForm((f) => ({ ...f, project: slug, queue: '' }));
  }, [slug, form.project]);

  const onSubmit = async () => {
    const { input, errors: errs } = formToServiceInput(form);
    setErrors(errs);
    if (errs.length > 0) return;
    const res = await apply({ input });
    if (res.error) {
      setErrors(serverFieldErrors(res.error.graphQLErrors[0]?.extensions));
      return;
    }
    if (res.data) navigate(servicePath(res.data.applyService.service));
  };

  if (projects.fetching && !projects.data) return <Loading label="Loading projects" />;
  if (projects.error) return <ErrorState error={projects.error} />;
  if (list.length === 0) return <Empty title="No projects yet">You need a project to run a service.</Empty>;
  const queues = list.find((p) => p.slug === slug)?.queues.map((q) => q.name) ?? [];
  const otherError = applied.error && serverFieldErrors(applied.error.graphQLErrors[0]?.extensions).length === 0 ? applied.error : null;

  return (
    <Box component="form" noValidate onSubmit={(e) => (e.preventDefault(), void onSubmit())} aria-label="New service">
      <Stack direction="row" spacing={2} alignItems="center" sx={{ mb: 2 }}>
        <Typography variant="h5" component="h1">
          New service
        </Typography>
        <ProjectPicker
          projects={list}
          value={slug}
          id="service-project"
          onChange={(s) => {
            const next = new URLSearchParams(params);
            next.set('project', s);
            setParams(next, { replace: true });
          }}
        />
      </Stack>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
        The same as <code>grus service apply -f svc.yaml</code>: a name already live in the project updates that service (a changed
        container is a new revision, rolled out within the rollout bounds).
      </Typography>
      {errors.length > 0 && (
        <Alert severity="error" sx={{ mb: 2 }} role="alert">
          {errors.length} problem{errors.length === 1 ? '' : 's'}: {errors.map((e) => `${e.field}: ${e.message}`).join('; ')}
        </Alert>
      )}
      {otherError && (
        <Alert severity="error" sx={{ mb: 2 }}>
          {errorText(otherError)}
        </Alert>
      )}
      <ServiceForm form={form} onChange={setForm} errors={errors} queues={queues} />
      <Stack direction="row" spacing={2} sx={{ mt: 3 }}>
        <Button component={RouterLink} to="/services">
          Cancel
        </Button>
        <Button type="submit" variant="contained" disabled={applied.fetching}>
          {applied.fetching ? 'Applying…' : 'Apply'}
        </Button>
      </Stack>
    </Box>
  );
}
