/** The queue picker of the job and service forms: the project's queues, `default` shown for the empty value. */
import { MenuItem, TextField, type TextFieldProps } from '@mui/material';

export function QueueField({
  queues,
  value,
  onChange,
  fieldProps,
}: {
  queues: readonly string[];
  value: string;
  onChange: (queue: string) => void;
  /** Error and helper text for the field. */
  fieldProps: Pick<TextFieldProps, 'error' | 'helperText'>;
}) {
  return (
    <TextField
      select
      label="Queue"
      fullWidth
      value={value}
      onChange={(e) => onChange(e.target.value)}
      SelectProps={{ displayEmpty: true }}
      InputLabelProps={{ shrink: true }}
      {...fieldProps}
    >
      <MenuItem value="">default</MenuItem>
      {queues
        .filter((q) => q !== 'default')
        .map((q) => (
          <MenuItem key={q} value={q}>
            {q}
          </MenuItem>
        ))}
    </TextField>
  );
}
