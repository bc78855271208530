import { QueueField } from '../../components/QueueField';
import { Box, FormControlLabel, Grid, InputAdornment, MenuItem, Switch, TextField, Typography } from '@mui/material';
import { ResourceFields } from '../../components/ResourceFields';
import type { ScalingMetric } from '../../gql/graphql';
import type { FieldError } from '../../jobs/jobInput';
import { errorFor } from '../../jobs/jobInput';
import type { ServiceForm as Form } from '../../services/serviceInput';

const METRIC_LABEL: Record<ScalingMetric, string> = {
  REQUEST_RATE: 'Request rate',
  GPU_UTILIZATION: 'GPU utilization',
};

/** The New service form: one replica's container and resources, its bounds, autoscaling and rollout. */
export function ServiceForm({
  form,
  onChange,
  errors,
  queues,
}: {
  form: Form;
  onChange: (form: Form) => void;
  /** Client and server errors, by `ServiceInput` field path. */
  errors: readonly FieldError[];
  /** Queue names of the chosen project. */
  queues: readonly string[];
}) {
  const set = (patch: Partial<Form>) => onChange({ ...form, ...patch });
  const field = (name: string, hint?: string) => {
    const msg = errorFor(errors, name);
    return { error: !!msg, helperText: msg ?? hint };
  };
  const section = (title: string) => (
    <Grid item xs={12}>
      <Typography variant="subtitle1" component="h2" sx={{ mt: 1 }}>
        {title}
      </Typography>
    </Grid>
  );
  const perSecond = form.metric === 'REQUEST_RATE';
  // `rollout` itself (both bounds 0) is said under the second bound.
  const rolloutMsg = errorFor(errors, 'rollout.maxUnavailable') ?? errors.find((e) => e.field === 'rollout')?.message;
  const rolloutField = { error: !!rolloutMsg, helperText: rolloutMsg ?? 'replicas a rollout may take down' };

  return (
    <Box component="fieldset" sx={{ border: 0, p: 0, m: 0 }}>
      <Grid container spacing={2}>
        <Grid item xs={12} md={4}>
          <TextField
            label="Service name"
            required
            fullWidth
            value={form.name}
            onChange={(e) => set({ name: e.target.value })}
            {...field('name', 'lowercase letters, digits and -; applying an existing name updates it')}
          />
        </Grid>
        <Grid item xs={12} md={3}>
          <QueueField queues={queues} value={form.queue} onChange={(q) => set({ queue: q })} fieldProps={field('queue')} />
        </Grid>
        <Grid item xs={12} md={5}>
          <TextField label="Image" required fullWidth value={form.image} onChange={(e) => set({ image: e.target.value })} {...field('image')} />
        </Grid>
        <Grid item xs={12} md={6}>
          <TextField
            label="Command"
            fullWidth
            multiline
            minRows={2}
            value={form.command}
            onChange={(e) => set({ command: e.target.value })}
            {...field('command', 'one argument per line; empty for the image’s own')}
          />
        </Grid>
        <Grid item xs={12} md={6}>
          <TextField
            label="Environment"
            fullWidth
            multiline
            minRows={2}
            value={form.env}
            onChange={(e) => set({ env: e.target.value })}
            {...field('env', 'KEY=value, one per line')}
          />
        </Grid>

        {section('Each replica')}
        <ResourceFields
          value={form}
          onChange={set}
          gpusLabel="GPUs per replica"
          field={(name, hint) => field(`resources.${name}`, hint)}
          beforeModels={
            <>
              <Grid item xs={6} md={2}>
                <TextField
                  label="Port"
                  required
                  fullWidth
                  inputProps={{ inputMode: 'numeric' }}
                  value={form.port}
                  onChange={(e) => set({ port: e.target.value })}
                  {...field('port', 'the server listens here')}
                />
              </Grid>
              <Grid item xs={6} md={4}>
                <TextField
                  label="Readiness path"
                  fullWidth
                  placeholder="/healthz"
                  value={form.readinessPath}
                  onChange={(e) => set({ readinessPath: e.target.value })}
                  {...field('readiness', 'a GET answering 2xx/3xx once it serves; empty: ready when running')}
                />
              </Grid>
            </>
          }
        />

        {section('Replicas')}
        <Grid item xs={6} md={2}>
          <TextField
            label="Min replicas"
            fullWidth
            inputProps={{ inputMode: 'numeric' }}
            value={form.minReplicas}
            onChange={(e) => set({ minReplicas: e.target.value })}
            {...field('minReplicas')}
          />
        </Grid>
        <Grid item xs={6} md={2}>
          <TextField
            label="Max replicas"
            fullWidth
            inputProps={{ inputMode: 'numeric' }}
            value={form.maxReplicas}
            onChange={(e) => set({ maxReplicas: e.target.value })}
            {...field('maxReplicas', 'empty: the minimum')}
          />
        </Grid>
        <Grid item xs={6} md={2}>
          <TextField
            label="Max surge"
            fullWidth
            inputProps={{ inputMode: 'numeric' }}
            value={form.maxSurge}
            onChange={(e) => set({ maxSurge: e.target.value })}
            {...field('rollout.maxSurge', 'extra replicas during a rollout')}
          />
        </Grid>
        <Grid item xs={6} md={2}>
          <TextField
            label="Max unavailable"
            fullWidth
            inputProps={{ inputMode: 'numeric' }}
            value={form.maxUnavailable}
            onChange={(e) => set({ maxUnavailable: e.target.value })}
            {...rolloutField}
          />
        </Grid>

        {section('Autoscaling')}
        <Grid item xs={12} md={3}>
          <FormControlLabel
            control={<Switch checked={form.autoscaling} onChange={(e) => set({ autoscaling: e.target.checked })} />}
            label="Autoscale between the bounds"
          />
        </Grid>
        {form.autoscaling && (
          <>
            <Grid item xs={12} md={3}>
              <TextField
                select
                label="Metric"
                fullWidth
                value={form.metric}
                onChange={(e) => set({ metric: e.target.value as ScalingMetric })}
                {...field('autoscaling.metric')}
              >
                {(Object.keys(METRIC_LABEL) as ScalingMetric[]).map((m) => (
                  <MenuItem key={m} value={m}>
                    {METRIC_LABEL[m]}
                  </MenuItem>
                ))}
              </TextField>
            </Grid>
            <Grid item xs={6} md={3}>
              <TextField
                label={perSecond ? 'Target requests per second per replica' : 'Target GPU utilization'}
                fullWidth
                inputProps={{ inputMode: 'decimal' }}
                InputProps={{ endAdornment: <InputAdornment position="end">{perSecond ? 'req/s' : '%'}</InputAdornment> }}
                value={form.target}
                onChange={(e) => set({ target: e.target.value })}
                {...field(
                  'autoscaling.target',
                  perSecond ? 'replicas = total request rate ÷ this' : 'mean GPU busy percentage of its replicas, 1–100',
                )}
              />
            </Grid>
            <Grid item xs={6} md={3}>
              <TextField
                label="Scale-down delay"
                fullWidth
                value={form.scaleDownDelay}
                onChange={(e) => set({ scaleDownDelay: e.target.value })}
                {...field('autoscaling.scaleDownDelay', 'a lower count only after asked this long, like 30s or 5m')}
              />
            </Grid>
          </>
        )}
      </Grid>
    </Box>
  );
}
