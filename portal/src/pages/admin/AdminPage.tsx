import { Stack, Typography } from '@mui/material';
import { useMutation, useQuery } from 'urql';
import type { CombinedError } from 'urql';
import {
  ApiTokensQuery,
  ClustersQuery,
  CreateApiTokenMutation,
  CreateProjectMutation,
  CreateTenantMutation,
  MeQuery,
  PriceBookQuery,
  RegisterClusterMutation,
  RevokeApiTokenMutation,
  RotateAgentTokenMutation,
  SetPriceMutation,
  SetTenantRightsMutation,
  SetTenantShareMutation,
  TenantsQuery,
} from '../../api/operations';
import { errorText, ErrorState, Loading } from '../../components/states';
import type { AgentToken } from './AdminView';
import { ApiTokensPanel, PriceBookPanel, RegisterClusterPanel } from './AdminView';
import { AuditLogPanel, TenantBudgetPanel } from './OperationsPanels';
import { TenantsPanel } from './TenantsPanel';

const fresh = { requestPolicy: 'network-only' } as const;

/** A section: its loading and error states, then the panel. */
function Section<T>({ res, label, retry, children }: { res: { data?: T; error?: CombinedError }; label: string; retry: () => void; children: (d: T) => JSX.Element }) {
  if (res.data) return children(res.data);
  if (res.error) return <ErrorState title={`Cannot load ${label}`} error={res.error} onRetry={retry} />;
  return <Loading label={`Loading ${label}`} />;
}

type AgentTokenAnswer = { agentToken: string; helmInstallCommand: string; cluster: { id: string } };
const agentToken = (r: { error?: CombinedError }, d: AgentTokenAnswer | undefined): AgentToken | string =>
  r.error || !d ? (r.error ? errorText(r.error) : 'no answer') : { clusterId: d.cluster.id, agentToken: d.agentToken, helmInstallCommand: d.helmInstallCommand };

export function AdminPage() {
  const [me] = useQuery({ query: MeQuery });
  const [tenants, refetchTenants] = useQuery({ query: TenantsQuery });
  const [prices, refetchPrices] = useQuery({ query: PriceBookQuery });
  const [tokens, refetchTokens] = useQuery({ query: ApiTokensQuery });
  const admin = !!me.data?.me.platformAdmin;
  const [clusters, refetchClusters] = useQuery({ query: ClustersQuery, pause: !admin });
  const [, createTenant] = useMutation(CreateTenantMutation);
  const [, createProject] = useMutation(CreateProjectMutation);
  const [, registerCluster] = useMutation(RegisterClusterMutation);
  const [, rotateAgentToken] = useMutation(RotateAgentTokenMutation);
  const [, setPrice] = useMutation(SetPriceMutation);
  const [, setTenantRights] = useMutation(SetTenantRightsMutation);
  const [, setTenantShare] = useMutation(SetTenantShareMutation);
  const [, createApiToken] = useMutation(CreateApiTokenMutation);
  const [, revokeApiToken] = useMutation(RevokeApiTokenMutation);

  return (
    <>
      <Typography variant="h5" component="h1" sx={{ mb: 2 }}>
        Admin
      </Typography>
      <Stack spacing={2}>
        <Section res={tenants} label="tenants" retry={() => refetchTenants(fresh)}>
          {(d) => (
            <TenantsPanel
              tenants={d.tenants}
              canCreateTenant={admin}
              onCreateTenant={async (slug, name) => {
                const r = await createTenant({ slug, name });
                refetchTenants(fresh);
                return r.error ? errorText(r.error) : null;
              }}
              onCreateProject={async (tenantId, slug, name) => {
                const r = await createProject({ tenantId, slug, name });
                return r.error ? errorText(r.error) : null;
              }}
              onSetRights={
                admin
                  ? async (change) => {
                      const { reclaimFromAny, reclaimFrom, ...rest } = change;
                      const r = await setTenantRights(reclaimFromAny ? { ...rest, reclaimFromAny } : { ...rest, reclaimFrom });
                      refetchTenants(fresh);
                      return r.error ? errorText(r.error) : null;
                    }
                  : undefined
              }
              onSetShare={
                admin
                  ? async (tenantId, change) => {
                      const r = await setTenantShare({ tenantId, ...change });
                      refetchTenants(fresh);
                      return r.error ? errorText(r.error) : null;
                    }
                  : undefined
              }
            />
          )}
        </Section>
        {admin && (
          <Section res={clusters} label="clusters" retry={() => refetchClusters(fresh)}>
            {(d) => (
              <RegisterClusterPanel
                clusters={d.clusters}
                onRegister={async (id, displayName) => {
                  const r = await registerCluster({ id, displayName });
                  refetchClusters(fresh);
                  return agentToken(r, r.data?.registerCluster);
                }}
                onRotate={async (clusterId) => {
                  const r = await rotateAgentToken({ clusterId });
                  return agentToken(r, r.data?.rotateAgentToken);
                }}
              />
            )}
          </Section>
        )}
        {admin && <TenantBudgetPanel />}
        {admin && <AuditLogPanel />}
        <Section res={prices} label="the price book" retry={() => refetchPrices(fresh)}>
          {(d) => (
            <PriceBookPanel
              prices={d.priceBook}
              onSetPrice={
                admin
                  ? async (p) => {
                      const r = await setPrice(p);
                      refetchPrices(fresh);
                      return r.error ? errorText(r.error) : null;
                    }
                  : undefined
              }
            />
          )}
        </Section>
        <Section res={tokens} label="your API tokens" retry={() => refetchTokens(fresh)}>
          {(d) => (
            <ApiTokensPanel
              tokens={d.apiTokens}
              onCreate={async (name, days, readOnly) => {
                const r = await createApiToken(readOnly ? { name, days, scopes: ['READ'] } : { name, days });
                refetchTokens(fresh);
                return r.error || !r.data ? errorText(r.error ?? 'no answer') : { secret: r.data.createApiToken.secret };
              }}
              onRevoke={async (id) => {
                const r = await revokeApiToken({ id });
                refetchTokens(fresh);
                return r.error ? errorText(r.error) : null;
              }}
            />
          )}
        </Section>
      </Stack>
    </>
  );
}
