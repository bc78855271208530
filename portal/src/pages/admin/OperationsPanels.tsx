import { Card, CardContent, CardHeader, MenuItem, TextField } from '@mui/material';
import { DataGrid, type GridColDef } from '@mui/x-data-grid';
import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { AuditEventsQuery, RemoveBudgetMutation, SetBudgetMutation, TenantBudgetsQuery } from '../../api/operations';
import { BudgetCard } from '../../components/BudgetCard';
import { formatTime } from '../../components/format';
import { gridEnvProps } from '../../components/grid';
import { errorText, ErrorState, Loading } from '../../components/states';
import type { AuditEventsQuery as AuditEventsData } from '../../gql/graphql';

type AuditEvent = AuditEventsData['auditEvents'][number];

const auditColumns: GridColDef<AuditEvent>[] = [
  { field: 'at', headerName: 'When', width: 170, valueFormatter: (v: string) => formatTime(v) },
  { field: 'actor', headerName: 'Who', width: 150 },
  { field: 'action', headerName: 'What', width: 160, valueFormatter: (v: string) => v.replaceAll('_', ' ') },
  { field: 'target', headerName: 'On', flex: 1, minWidth: 160 },
  { field: 'detail', headerName: 'Detail', flex: 1, minWidth: 160 },
];

/** Platform admins: the newest operations on the fleet and the tenancy. */
export function AuditLogPanel() {
  const [res, reexecute] = useQuery({ query: AuditEventsQuery, variables: { first: 100 }, requestPolicy: 'cache-and-network' });
  return (
    <Card variant="outlined" component="section" aria-label="Audit log">
      <CardHeader title="Audit log" titleTypographyProps={{ variant: 'h6', component: 'h2' }} subheader="Cordons, drains, retired clusters, rotated tokens, deletions and budgets" />
      <CardContent>
        {res.error ? (
          <ErrorState error={res.error} onRetry={() => reexecute({ requestPolicy: 'network-only' })} />
        ) : !res.data ? (
          <Loading label="Loading the audit log" />
        ) : (
          <DataGrid {...gridEnvProps} aria-label="Audit events" rows={res.data.auditEvents} columns={auditColumns} autoHeight density="compact" hideFooter={res.data.auditEvents.length <= 25} pageSizeOptions={[25, 50, 100]} />
        )}
      </CardContent>
    </Card>
  );
}

/** Platform admins: a tenant's monthly budget, which binds every project of the tenant. */
export function TenantBudgetPanel() {
  const [res, reexecute] = useQuery({ query: TenantBudgetsQuery });
  const [, setBudget] = useMutation(SetBudgetMutation);
  const [, removeBudget] = useMutation(RemoveBudgetMutation);
  const [tenantId, setTenantId] = useState('');
  if (res.error) return <ErrorState error={res.error} onRetry={() => reexecute({ requestPolicy: 'network-only' })} />;
  if (!res.data) return <Loading label="Loading tenant budgets" />;
  const tenants = res.data.tenants;
  const chosen = tenants.find((t) => t.id === tenantId) ?? tenants[0];
  if (!chosen) return null;
  const refresh = () => reexecute({ requestPolicy: 'network-only' });
  return (
    <Card variant="outlined" component="section" aria-label="Tenant budgets">
      <CardHeader title="Tenant budgets" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
      <CardContent>
        <TextField select size="small" label="Tenant" value={chosen.id} onChange={(e) => setTenantId(e.target.value)} sx={{ minWidth: 200 }}>
          {tenants.map((t) => (
            <MenuItem key={t.id} value={t.id}>
              {t.name} ({t.slug})
            </MenuItem>
          ))}
        </TextField>
        <BudgetCard
          key={chosen.id}
          title={`Monthly budget of ${chosen.name}`}
          budget={chosen.budget}
          onSave={async (change) => {
            const r = await setBudget({ tenantId: chosen.id, ...change });
            if (!r.error) refresh();
            return r.error ? errorText(r.error) : null;
          }}
          onRemove={async () => {
            const r = await removeBudget({ tenantId: chosen.id });
            if (!r.error) refresh();
            return r.error ? errorText(r.error) : null;
          }}
        />
      </CardContent>
    </Card>
  );
}
