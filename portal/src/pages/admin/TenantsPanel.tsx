import { gridEnvProps } from '../../components/grid';
import { Alert, Button, Card, CardContent, CardHeader, MenuItem, Stack, TextField } from '@mui/material';
import { DataGrid, type GridColDef } from '@mui/x-data-grid';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { formatTime } from '../../components/format';
import type { TenantsQuery } from '../../gql/graphql';

type Tenant = TenantsQuery['tenants'][number];

const columns: GridColDef<Tenant>[] = [
  { field: 'slug', headerName: 'Slug', flex: 1 },
  { field: 'name', headerName: 'Name', flex: 1 },
  { field: 'createdAt', headerName: 'Created', width: 170, valueFormatter: (v: string) => formatTime(v) },
];

/** Tenants (wired today): list, create a tenant (platform admin), create a project (tenant admin). */
export function TenantsPanel({
  tenants,
  canCreateTenant,
  onCreateTenant,
  onCreateProject,
}: {
  tenants: Tenant[];
  canCreateTenant: boolean;
  onCreateTenant: (slug: string, name: string) => Promise<string | null>;
  onCreateProject: (tenantId: string, slug: string, name: string) => Promise<string | null>;
}) {
  const [tSlug, setTSlug] = useState('');
  const [tName, setTName] = useState('');
  const [pTenant, setPTenant] = useState('');
  const [pSlug, setPSlug] = useState('');
  const [pName, setPName] = useState('');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const done = (err: string | null, ok: string) => setMessage(err ? { ok: false, text: err } : { ok: true, text: ok });

  const createTenant = async (e: FormEvent) => {
    e.preventDefault();
    const err = await onCreateTenant(tSlug.trim(), tName.trim());
    done(err, `Tenant ${tSlug} created`);
    if (!err) setTSlug(''), setTName('');
  };
  const createProject = async (e: FormEvent) => {
    e.preventDefault();
    const err = await onCreateProject(pTenant || tenants[0]?.id || '', pSlug.trim(), pName.trim());
    done(err, `Project ${pSlug} created`);
    if (!err) setPSlug(''), setPName('');
  };

  return (
    <Card variant="outlined">
      <CardHeader title="Tenants and projects" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
      <CardContent>
        <DataGrid
          {...gridEnvProps}
          aria-label="Tenants"
          rows={tenants}
          columns={columns}
          autoHeight
          density="compact"
          hideFooter={tenants.length <= 25}
          localeText={{ noRowsLabel: 'No tenants' }}
        />
        {canCreateTenant && (
          <Stack component="form" direction="row" spacing={2} sx={{ mt: 2 }} aria-label="Create a tenant" onSubmit={(e) => void createTenant(e)}>
            <TextField size="small" label="Tenant slug" value={tSlug} onChange={(e) => setTSlug(e.target.value)} required />
            <TextField size="small" label="Tenant name" value={tName} onChange={(e) => setTName(e.target.value)} required />
            <Button type="submit" variant="outlined" disabled={!tSlug.trim() || !tName.trim()}>
              Create tenant
            </Button>
          </Stack>
        )}
        {tenants.length > 0 && (
          <Stack component="form" direction="row" spacing={2} sx={{ mt: 2 }} aria-label="Create a project" onSubmit={(e) => void createProject(e)}>
            <TextField
              size="small"
              select
              label="Tenant"
              value={pTenant || tenants[0]?.id || ''}
              onChange={(e) => setPTenant(e.target.value)}
              sx={{ minWidth: 160 }}
            >
              {tenants.map((t) => (
                <MenuItem key={t.id} value={t.id}>
                  {t.slug}
                </MenuItem>
              ))}
            </TextField>
            <TextField size="small" label="Project slug" value={pSlug} onChange={(e) => setPSlug(e.target.value)} required />
            <TextField size="small" label="Project name" value={pName} onChange={(e) => setPName(e.target.value)} required />
            <Button type="submit" variant="outlined" disabled={!pSlug.trim() || !pName.trim()}>
              Create project
            </Button>
          </Stack>
        )}
        {message && (
          <Alert severity={message.ok ? 'success' : 'error'} sx={{ mt: 2 }} onClose={() => setMessage(null)}>
            {message.text}
          </Alert>
        )}
      </CardContent>
    </Card>
  );
}
