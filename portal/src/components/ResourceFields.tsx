import { Grid, TextField } from '@mui/material';
import type { ReactNode } from 'react';
import type { ResourceForm } from '../jobs/jobInput';

/** A field's error (or hint) as a TextField shows it. */
export type FieldProps = (name: keyof ResourceForm, hint?: string) => { error: boolean; helperText?: string };

/**
 * What one replica gets (GPUs, a share or a MIG profile, GPU models, CPU and memory), as Grid
 * items: the Submit form's task and the New service form's replica. `field` names the errors by
 * the `ResourcesInput` field (`gpus`, `gpuMilli`, ...); `beforeModels` goes in the row before
 * the GPU models.
 */
export function ResourceFields({
  value,
  onChange,
  field,
  gpusLabel = 'GPUs',
  beforeModels,
}: {
  value: ResourceForm;
  onChange: (patch: Partial<ResourceForm>) => void;
  field: FieldProps;
  gpusLabel?: string;
  beforeModels?: ReactNode;
}) {
  return (
    <>
      <Grid item xs={6} md={2}>
        <TextField
          label={gpusLabel}
          fullWidth
          inputProps={{ inputMode: 'numeric' }}
          value={value.gpus}
          onChange={(e) => onChange({ gpus: e.target.value })}
          {...field('gpus')}
        />
      </Grid>
      <Grid item xs={6} md={2}>
        <TextField
          label="GPU share (milli)"
          fullWidth
          inputProps={{ inputMode: 'numeric' }}
          value={value.gpuMilli}
          onChange={(e) => onChange({ gpuMilli: e.target.value })}
          {...field('gpuMilli', '1–1000, with 1 GPU')}
        />
      </Grid>
      <Grid item xs={6} md={2}>
        <TextField
          label="MIG profile"
          fullWidth
          value={value.migProfile}
          onChange={(e) => onChange({ migProfile: e.target.value })}
          {...field('migProfile', 'e.g. 1g.10gb: one MIG instance')}
        />
      </Grid>
      <Grid item xs={6} md={2}>
        <TextField
          label="GPU memory (MiB)"
          fullWidth
          inputProps={{ inputMode: 'numeric' }}
          value={value.gpuMemoryMib}
          onChange={(e) => onChange({ gpuMemoryMib: e.target.value })}
          {...field('gpuMemoryMib')}
        />
      </Grid>
      <Grid item xs={6} md={2}>
        <TextField
          label="CPU (milli)"
          fullWidth
          inputProps={{ inputMode: 'numeric' }}
          value={value.cpuMilli}
          onChange={(e) => onChange({ cpuMilli: e.target.value })}
          {...field('cpuMilli')}
        />
      </Grid>
      <Grid item xs={6} md={2}>
        <TextField
          label="Memory (MiB)"
          fullWidth
          inputProps={{ inputMode: 'numeric' }}
          value={value.memoryMib}
          onChange={(e) => onChange({ memoryMib: e.target.value })}
          {...field('memoryMib')}
        />
      </Grid>
      {beforeModels}
      <Grid item xs={12}>
        <TextField
          label="GPU models"
          fullWidth
          placeholder="A100-80GB, H100-80GB"
          value={value.gpuModels}
          onChange={(e) => onChange({ gpuModels: e.target.value })}
          {...field('gpuModels', 'any of these, comma separated; empty for any')}
        />
      </Grid>
    </>
  );
}
