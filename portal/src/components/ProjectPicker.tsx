import { FormControl, InputLabel, MenuItem, Select } from '@mui/material';

export interface ProjectOption {
  slug: string;
  name: string;
}

export function ProjectPicker({
  projects,
  value,
  onChange,
  id = 'project-picker',
}: {
  projects: readonly ProjectOption[];
  value: string;
  onChange: (slug: string) => void;
  id?: string;
}) {
  return (
    <FormControl size="small" sx={{ minWidth: 220 }}>
      <InputLabel id={`${id}-label`}>Project</InputLabel>
      <Select
        labelId={`${id}-label`}
        id={id}
        label="Project"
        value={projects.some((p) => p.slug === value) ? value : ''}
        onChange={(e) => onChange(e.target.value)}
      >
        {projects.map((p) => (
          <MenuItem key={p.slug} value={p.slug}>
            {p.name} ({p.slug})
          </MenuItem>
        ))}
      </Select>
    </FormControl>
  );
}
