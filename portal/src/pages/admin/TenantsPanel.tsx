import { gridEnvProps } from '../../components/grid';
import { Alert, Button, Card, CardContent, CardHeader, Checkbox, FormControlLabel, MenuItem, Stack, TextField } from '@mui/material';
import { DataGrid, type GridColDef } from '@mui/x-data-grid';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { formatTime } from '../../components/format';
import { ShareForm, shareText } from '../../components/ShareForm';
import type { ShareChange } from '../../components/ShareForm';
import type { TenantsQuery } from '../../gql/graphql';
import { PRIORITY_CLASSES } from '../../jobs/jobInput';

type Tenant = TenantsQuery['tenants'][number];

/** What a platform admin changes of a tenant's rights (`setTenantRights`). */
export type RightsChange = {
  tenantId: string;
  maxPriorityClass: string;
  mayPreempt: boolean;
  reclaimFromAny: boolean;
  reclaimFrom: string[];
};

/** A choice of one tenant, by slug. */
function TenantSelect({ label, tenants, value, onChange }: { label: string; tenants: Tenant[]; value: string; onChange: (id: string) => void }) {
  return (
    <TextField size="small" select label={label} value={value} onChange={(e) => onChange(e.target.value)} sx={{ minWidth: 160 }}>
      {tenants.map((t) => (
        <MenuItem key={t.id} value={t.id}>
          {t.slug}
        </MenuItem>
      ))}
    </TextField>
  );
}

/** Whose borrowed work a tenant's jobs may reclaim, as people say it. */
export function reclaimText(t: Tenant, tenants: Tenant[]): string {
  if (t.rights.reclaimFromAny) return 'any tenant';
  const named = t.rights.reclaimFrom.map((id) => tenants.find((o) => o.id === id)?.slug ?? `#${id}`);
  return ['own', ...named].join(', ');
}

/** Tenants: list with their rights, create a tenant and change its rights (platform admin),
 * create a project (tenant admin). */
export function TenantsPanel({
  tenants,
  canCreateTenant,
  onCreateTenant,
  onCreateProject,
  onSetRights,
  onSetShare,
}: {
  tenants: Tenant[];
  canCreateTenant: boolean;
  onCreateTenant: (slug: string, name: string) => Promise<string | null>;
  onCreateProject: (tenantId: string, slug: string, name: string) => Promise<string | null>;
  /** Platform admins only. */
  onSetRights?: (change: RightsChange) => Promise<string | null>;
  /** Platform admins only: a tenant's fair-share weight and guarantees. */
  onSetShare?: (tenantId: string, change: ShareChange) => Promise<string | null>;
}) {
  const columns: GridColDef<Tenant>[] = [
    { field: 'slug', headerName: 'Slug', flex: 1 },
    { field: 'name', headerName: 'Name', flex: 1 },
    { field: 'maxPriorityClass', headerName: 'Highest priority', width: 140, valueGetter: (_v, t) => t.rights.maxPriorityClass },
    { field: 'mayPreempt', headerName: 'May preempt', width: 120, valueGetter: (_v, t) => (t.rights.mayPreempt ? 'yes' : 'no') },
    { field: 'reclaimFrom', headerName: 'Reclaims from', flex: 1, valueGetter: (_v, t) => reclaimText(t, tenants) },
    { field: 'share', headerName: 'Fair share', flex: 1, valueGetter: (_v, t) => shareText(t.share) },
    { field: 'createdAt', headerName: 'Created', width: 170, valueFormatter: (v: string) => formatTime(v) },
  ];
  const [rTenant, setRTenant] = useState('');
  const chosen = tenants.find((t) => t.id === (rTenant || tenants[0]?.id));
  const [rights, setRights] = useState<Omit<RightsChange, 'tenantId'> | null>(null);
  const stored = chosen?.rights;
  const shown =
    rights ??
    (stored
      ? { maxPriorityClass: stored.maxPriorityClass, mayPreempt: stored.mayPreempt, reclaimFromAny: stored.reclaimFromAny, reclaimFrom: stored.reclaimFrom }
      : null);
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
  const saveRights = async (e: FormEvent) => {
    e.preventDefault();
    if (!onSetRights || !chosen || !shown) return;
    const err = await onSetRights({ tenantId: chosen.id, ...shown });
    done(err, `Rights of ${chosen.slug} saved`);
    if (!err) setRights(null);
  };
  // Projects are created by a tenant's admins (and platform admins): only their tenants.
  const administered = tenants.filter((t) => t.myRole != null);
  const createProject = async (e: FormEvent) => {
    e.preventDefault();
    const err = await onCreateProject(pTenant || administered[0]?.id || '', pSlug.trim(), pName.trim());
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
        {onSetRights && chosen && shown && (
          <Stack component="form" direction="row" spacing={2} sx={{ mt: 2 }} flexWrap="wrap" useFlexGap aria-label="Tenant rights" onSubmit={(e) => void saveRights(e)}>
            <TenantSelect
              label="Rights of tenant"
              tenants={tenants}
              value={chosen.id}
              onChange={(id) => {
                setRTenant(id);
                setRights(null);
              }}
            />
            <TextField
              size="small"
              select
              label="Highest priority"
              value={shown.maxPriorityClass}
              onChange={(e) => setRights({ ...shown, maxPriorityClass: e.target.value })}
              sx={{ minWidth: 150 }}
            >
              {PRIORITY_CLASSES.map((p) => (
                <MenuItem key={p} value={p}>
                  {p}
                </MenuItem>
              ))}
            </TextField>
            <FormControlLabel
              control={<Checkbox checked={shown.mayPreempt} onChange={(e) => setRights({ ...shown, mayPreempt: e.target.checked })} />}
              label="May preempt"
            />
            <FormControlLabel
              control={<Checkbox checked={shown.reclaimFromAny} onChange={(e) => setRights({ ...shown, reclaimFromAny: e.target.checked, reclaimFrom: [] })} />}
              label="Reclaims from any tenant"
            />
            {!shown.reclaimFromAny && (
              <TextField
                size="small"
                select
                label="Also reclaims from"
                value={shown.reclaimFrom}
                onChange={(e) => setRights({ ...shown, reclaimFrom: e.target.value as unknown as string[] })}
                SelectProps={{ multiple: true }}
                sx={{ minWidth: 180 }}
              >
                {tenants
                  .filter((t) => t.id !== chosen.id)
                  .map((t) => (
                    <MenuItem key={t.id} value={t.id}>
                      {t.slug}
                    </MenuItem>
                  ))}
              </TextField>
            )}
            <Button type="submit" variant="outlined" disabled={!rights}>
              Save rights
            </Button>
          </Stack>
        )}
        {onSetShare && chosen && (
          <ShareForm
            key={`${chosen.id}:${JSON.stringify(chosen.share)}`}
            label={`Fair share of tenant ${chosen.slug}`}
            share={chosen.share}
            onSave={async (change) => {
              const err = await onSetShare(chosen.id, change);
              done(err, `Fair share of ${chosen.slug} saved`);
              return err;
            }}
          />
        )}
        {administered.length > 0 && (
          <Stack component="form" direction="row" spacing={2} sx={{ mt: 2 }} aria-label="Create a project" onSubmit={(e) => void createProject(e)}>
            <TenantSelect label="Tenant" tenants={administered} value={pTenant || administered[0]?.id || ''} onChange={setPTenant} />
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
