// The pages whose data waits for API fields (see each page's *.planned.graphql and use*.ts).
import { Stack } from '@mui/material';
import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { CreateProjectMutation, CreateTenantMutation, MeQuery, TenantsQuery } from '../api/operations';
import { PlannedPage } from '../components/PlannedPage';
import { errorText, ErrorState, Loading, Unavailable } from '../components/states';
import { ApiTokensPanel, PriceBookPanel, RegisterClusterPanel } from './admin/AdminView';
import { TenantsPanel } from './admin/TenantsPanel';
import { useAdmin } from './admin/useAdmin';
import { BillingView } from './billing/BillingView';
import { useBilling } from './billing/useBilling';
import { ClustersView } from './clusters/ClustersView';
import { useClusters } from './clusters/useClusters';
import { OverviewView } from './overview/OverviewView';
import { useOverview } from './overview/useOverview';

export function OverviewPage() {
  return <PlannedPage title="Overview" result={useOverview()}>{(d) => <OverviewView data={d} />}</PlannedPage>;
}

export function ClustersPage() {
  return <PlannedPage title="Clusters" result={useClusters()}>{(d) => <ClustersView clusters={d} />}</PlannedPage>;
}

export function BillingPage() {
  const [period] = useState<'DAY' | 'WEEK' | 'MONTH'>('DAY');
  return (
    <PlannedPage title="Billing" result={useBilling(period)}>
      {(d) => <BillingView rows={d.rows} onExport={d.exportUsage} />}
    </PlannedPage>
  );
}

export function AdminPage() {
  const admin = useAdmin();
  const [me] = useQuery({ query: MeQuery });
  const [tenants, reexecute] = useQuery({ query: TenantsQuery });
  const [, createTenant] = useMutation(CreateTenantMutation);
  const [, createProject] = useMutation(CreateProjectMutation);
  const refresh = () => reexecute({ requestPolicy: 'network-only' });
  return (
    <PlannedPage title="Admin" result={{ status: 'ready', data: null, refresh }}>
      {() => (
        <Stack spacing={2}>
          {tenants.fetching && !tenants.data ? (
            <Loading label="Loading tenants" />
          ) : tenants.error ? (
            <ErrorState error={tenants.error} onRetry={refresh} />
          ) : (
            <TenantsPanel
              tenants={tenants.data?.tenants ?? []}
              canCreateTenant={!!me.data?.me.platformAdmin}
              onCreateTenant={async (slug, name) => {
                const r = await createTenant({ slug, name });
                refresh();
                return r.error ? errorText(r.error) : null;
              }}
              onCreateProject={async (tenantId, slug, name) => {
                const r = await createProject({ tenantId, slug, name });
                return r.error ? errorText(r.error) : null;
              }}
            />
          )}
          {admin.status === 'unavailable' && <Unavailable fields={admin.fields} />}
          {admin.status === 'ready' && (
            <>
              <RegisterClusterPanel onRegister={admin.data.registerCluster} />
              <PriceBookPanel prices={admin.data.prices} />
              <ApiTokensPanel tokens={admin.data.tokens} onCreate={admin.data.createToken} onRevoke={admin.data.revokeToken} />
            </>
          )}
        </Stack>
      )}
    </PlannedPage>
  );
}
