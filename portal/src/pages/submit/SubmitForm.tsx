import { QueueField } from '../../components/QueueField';
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  CardHeader,
  Checkbox,
  FormControlLabel,
  Grid,
  IconButton,
  MenuItem,
  Switch,
  TextField,
} from '@mui/material';
import DeleteIcon from '@mui/icons-material/Delete';
import type { FieldError, JobForm, TaskForm } from '../../jobs/jobInput';
import { emptyTask, errorFor, PRIORITY_CLASSES, SCOPES } from '../../jobs/jobInput';
import { ResourceFields } from '../../components/ResourceFields';

export interface SubmitFormProps {
  form: JobForm;
  onChange: (form: JobForm) => void;
  errors: readonly FieldError[];
  /** Queue names of the chosen project. */
  queues: readonly string[];
}

export function SubmitForm({ form, onChange, errors, queues }: SubmitFormProps) {
  const set = <K extends keyof JobForm>(k: K, v: JobForm[K]) => onChange({ ...form, [k]: v });
  const setTask = (i: number, patch: Partial<TaskForm>) =>
    set(
      'tasks',
      form.tasks.map((t, j) => (j === i ? { ...t, ...patch } : t)),
    );
  const field = (name: string) => {
    const msg = errorFor(errors, name);
    return { error: !!msg, helperText: msg };
  };
  const poolsError = errorFor(errors, 'pools') ?? errors.find((e) => e.field.startsWith('pools.'))?.message;
  const taskField = (i: number, name: string, hint?: string) => {
    const msg = errorFor(errors, `tasks.${i}.${name}`);
    return { error: !!msg, helperText: msg ?? hint };
  };

  return (
    <Box component="fieldset" sx={{ border: 0, p: 0, m: 0 }}>
      <Grid container spacing={2}>
        <Grid item xs={12} md={4}>
          <TextField
            label="Job name"
            required
            fullWidth
            value={form.name}
            onChange={(e) => set('name', e.target.value)}
            {...field('name')}
            helperText={errorFor(errors, 'name') ?? 'lowercase letters, digits and -'}
          />
        </Grid>
        <Grid item xs={12} md={3}>
          <QueueField queues={queues} value={form.queue} onChange={(q) => set('queue', q)} fieldProps={field('queue')} />
        </Grid>
        <Grid item xs={12} md={2}>
          <TextField
            select
            label="Priority"
            fullWidth
            value={form.priority}
            onChange={(e) => set('priority', e.target.value)}
            {...field('priority')}
          >
            {PRIORITY_CLASSES.map((p) => (
              <MenuItem key={p} value={p}>
                {p}
              </MenuItem>
            ))}
          </TextField>
        </Grid>
        <Grid item xs={12} md={3}>
          <TextField
            label="Max runtime"
            fullWidth
            placeholder="2h"
            value={form.maxRuntime}
            onChange={(e) => set('maxRuntime', e.target.value)}
            {...field('maxRuntime')}
            helperText={errorFor(errors, 'maxRuntime') ?? 'like 90m or 2h; empty for none'}
          />
        </Grid>
        <Grid item xs={12} md={5}>
          <TextField
            label="Node pools"
            fullWidth
            placeholder="a100-train, inference"
            value={form.pools}
            onChange={(e) => set('pools', e.target.value)}
            error={!!poolsError}
            helperText={poolsError ?? 'in order of preference; empty for any node'}
          />
        </Grid>
        <Grid item xs={12} md={4}>
          <FormControlLabel
            control={<Switch checked={form.preemptible} onChange={(e) => set('preemptible', e.target.checked)} />}
            label="Preemptible"
          />
          <FormControlLabel
            control={<Checkbox checked={form.gang} onChange={(e) => set('gang', e.target.checked)} />}
            label="Gang (all or nothing)"
          />
        </Grid>
        <Grid item xs={12} md={3}>
          <TextField
            label="Gang minimum members"
            fullWidth
            disabled={!form.gang}
            inputProps={{ inputMode: 'numeric' }}
            value={form.gangMinMembers}
            onChange={(e) => set('gangMinMembers', e.target.value)}
            {...field('gang.minMembers')}
          />
        </Grid>
        <Grid item xs={12} md={4}>
          <FormControlLabel
            control={<Switch checked={form.workspace} onChange={(e) => set('workspace', e.target.checked)} />}
            label="Interactive workspace"
          />
        </Grid>
        {form.workspace && (
          <>
            <Grid item xs={4} md={2}>
              <TextField
                label="Port"
                fullWidth
                inputProps={{ inputMode: 'numeric' }}
                value={form.workspacePort}
                onChange={(e) => set('workspacePort', e.target.value)}
                {...field('workspace.port')}
              />
            </Grid>
            <Grid item xs={4} md={3}>
              <TextField
                label="Idle timeout"
                fullWidth
                value={form.idleTimeout}
                onChange={(e) => set('idleTimeout', e.target.value)}
                {...field('workspace.idleTimeout')}
                helperText={errorFor(errors, 'workspace.idleTimeout') ?? 'without GPU activity this long: warned, then stopped or suspended'}
              />
            </Grid>
            <Grid item xs={4} md={3}>
              <TextField
                select
                label="When idle"
                fullWidth
                value={form.idleAction}
                onChange={(e) => set('idleAction', e.target.value as 'STOP' | 'SUSPEND')}
                {...field('workspace')}
              >
                <MenuItem value="STOP">Stop it</MenuItem>
                <MenuItem value="SUSPEND">Suspend it (resume later)</MenuItem>
              </TextField>
            </Grid>
          </>
        )}
        <Grid item xs={12} md={5}>
          <TextField
            label="Labels"
            fullWidth
            multiline
            minRows={1}
            placeholder="team=nlp"
            value={form.labels}
            onChange={(e) => set('labels', e.target.value)}
            {...field('labels')}
            helperText={errorFor(errors, 'labels') ?? 'key=value, one per line'}
          />
        </Grid>
      </Grid>
      {(form.policies.length > 0 || form.elastic || form.clusterSelector.length > 0) && (
        <Alert severity="info" sx={{ mt: 2 }}>
          This job also has {form.policies.length} polic{form.policies.length === 1 ? 'y' : 'ies'}
          {form.elastic ? ', elastic bounds' : ''}
          {form.clusterSelector.length ? ', a cluster selector' : ''}: edit those in the YAML tab.
        </Alert>
      )}
      {errorFor(errors, 'tasks') && !errors.some((e) => e.field.startsWith('tasks.')) && (
        <Alert severity="error" sx={{ mt: 2 }}>
          {errorFor(errors, 'tasks')}
        </Alert>
      )}
      {form.tasks.map((t, i) => (
        <Card key={i} variant="outlined" sx={{ mt: 2 }} component="section" aria-label={`Task ${i + 1}`}>
          <CardHeader
            title={`Task ${i + 1}`}
            titleTypographyProps={{ variant: 'subtitle1', component: 'h3' }}
            action={
              <IconButton
                aria-label={`Remove task ${i + 1}`}
                disabled={form.tasks.length === 1}
                onClick={() =>
                  set(
                    'tasks',
                    form.tasks.filter((_, j) => j !== i),
                  )
                }
              >
                <DeleteIcon />
              </IconButton>
            }
          />
          <CardContent>
            <Grid container spacing={2}>
              <Grid item xs={12} md={3}>
                <TextField
                  label="Task name"
                  required
                  fullWidth
                  value={t.name}
                  onChange={(e) => setTask(i, { name: e.target.value })}
                  {...taskField(i, 'name')}
                />
              </Grid>
              <Grid item xs={12} md={2}>
                <TextField
                  label="Replicas"
                  fullWidth
                  inputProps={{ inputMode: 'numeric' }}
                  value={t.replicas}
                  onChange={(e) => setTask(i, { replicas: e.target.value })}
                  {...taskField(i, 'replicas')}
                />
              </Grid>
              <Grid item xs={12} md={7}>
                <TextField
                  label="Image"
                  required
                  fullWidth
                  value={t.image}
                  onChange={(e) => setTask(i, { image: e.target.value })}
                  {...taskField(i, 'image')}
                />
              </Grid>
              <Grid item xs={12} md={6}>
                <TextField
                  label="Command"
                  fullWidth
                  multiline
                  minRows={2}
                  value={t.command}
                  onChange={(e) => setTask(i, { command: e.target.value })}
                  {...taskField(i, 'command', 'one argument per line')}
                />
              </Grid>
              <Grid item xs={12} md={6}>
                <TextField
                  label="Environment"
                  fullWidth
                  multiline
                  minRows={2}
                  value={t.env}
                  onChange={(e) => setTask(i, { env: e.target.value })}
                  {...taskField(i, 'env', 'KEY=value, one per line')}
                />
              </Grid>
              <ResourceFields
                value={t}
                onChange={(patch) => setTask(i, patch)}
                field={(name, hint) => taskField(i, `resources.${name}`, hint)}
                beforeModels={
                  <Grid item xs={6} md={2}>
                    <TextField
                      select
                      label="Topology"
                      fullWidth
                      value={t.topology}
                      onChange={(e) => setTask(i, { topology: e.target.value as TaskForm['topology'] })}
                      {...taskField(i, 'topology')}
                    >
                      <MenuItem value="">none</MenuItem>
                      {SCOPES.map((s) => (
                        <MenuItem key={s} value={s}>
                          {s.toLowerCase()}
                        </MenuItem>
                      ))}
                    </TextField>
                  </Grid>
                }
              />
            </Grid>
          </CardContent>
        </Card>
      ))}
      <Button sx={{ mt: 2 }} onClick={() => set('tasks', [...form.tasks, emptyTask(`task-${form.tasks.length + 1}`)])}>
        Add a task
      </Button>
    </Box>
  );
}
