import { gridEnvProps } from '../../components/grid';
import { Alert, Box, Button, MenuItem, Stack, TextField } from '@mui/material';
import { DataGrid, type GridColDef } from '@mui/x-data-grid';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { ROLE_LABEL } from '../../components/format';
import type { ProjectQuery, ProjectRole } from '../../gql/graphql';

export type Member = ProjectQuery['project']['members'][number];

const columns: GridColDef<Member & { id: string }>[] = [
  { field: 'name', headerName: 'User', flex: 1, valueGetter: (_v, r) => r.user.displayName ?? r.user.subject },
  { field: 'subject', headerName: 'Subject', flex: 1, valueGetter: (_v, r) => r.user.subject },
  { field: 'role', headerName: 'Role', width: 140, valueGetter: (_v, r) => ROLE_LABEL[r.role] },
  { field: 'email', headerName: 'Email', flex: 1, valueGetter: (_v, r) => r.user.email ?? '' },
];

export function MembersTable({ members }: { members: readonly Member[] }) {
  return (
    <DataGrid
      {...gridEnvProps}
      aria-label="Members"
      rows={members.map((m) => ({ ...m, id: m.user.id }))}
      columns={columns}
      autoHeight
      density="compact"
      hideFooter={members.length <= 25}
      localeText={{ noRowsLabel: 'No members' }}
    />
  );
}

export function MembersPanel({
  members,
  canManage,
  onAdd,
}: {
  members: readonly Member[];
  canManage: boolean;
  onAdd: (subject: string, role: ProjectRole) => Promise<string | null>;
}) {
  const [subject, setSubject] = useState('');
  const [role, setRole] = useState<ProjectRole>('MEMBER');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!subject.trim()) return;
    const err = await onAdd(subject.trim(), role);
    setMessage(err ? { ok: false, text: err } : { ok: true, text: `Added ${subject.trim()} as ${ROLE_LABEL[role]}` });
    if (!err) setSubject('');
  };
  return (
    <Box>
      <MembersTable members={members} />
      {canManage && (
        <Stack component="form" onSubmit={(e) => void submit(e)} direction="row" spacing={2} sx={{ mt: 2 }} aria-label="Add a member">
          <TextField
            size="small"
            label="User subject"
            placeholder="dev:bob or the OIDC subject"
            value={subject}
            onChange={(e) => setSubject(e.target.value)}
            helperText="the user must have signed in once"
          />
          <TextField
            size="small"
            select
            label="Role"
            value={role}
            onChange={(e) => setRole(e.target.value as ProjectRole)}
            sx={{ minWidth: 150 }}
          >
            {(['VIEWER', 'MEMBER', 'PROJECT_ADMIN'] as const).map((r) => (
              <MenuItem key={r} value={r}>
                {ROLE_LABEL[r]}
              </MenuItem>
            ))}
          </TextField>
          <Button type="submit" variant="outlined" sx={{ alignSelf: 'flex-start' }}>
            Add member
          </Button>
        </Stack>
      )}
      {message && (
        <Alert severity={message.ok ? 'success' : 'error'} sx={{ mt: 1 }} onClose={() => setMessage(null)}>
          {message.text}
        </Alert>
      )}
    </Box>
  );
}
