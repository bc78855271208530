import { Card, CardActionArea, CardContent, Chip, Grid, Stack, Typography } from '@mui/material';
import { Link as RouterLink } from 'react-router-dom';
import { useQuery } from 'urql';
import { ProjectsQuery } from '../../api/operations';
import { formatTime, ROLE_LABEL } from '../../components/format';
import { Empty, ErrorState, Loading } from '../../components/states';

export function ProjectsPage() {
  const [res, reexecute] = useQuery({ query: ProjectsQuery });
  if (res.fetching && !res.data) return <Loading label="Loading projects" />;
  if (res.error) return <ErrorState error={res.error} onRetry={() => reexecute({ requestPolicy: 'network-only' })} />;
  const projects = res.data?.projects ?? [];
  return (
    <>
      <Typography variant="h5" component="h1" sx={{ mb: 2 }}>
        Projects
      </Typography>
      {projects.length === 0 ? (
        <Empty title="You are in no project yet">A tenant admin creates projects and adds members.</Empty>
      ) : (
        <Grid container spacing={2}>
          {projects.map((p) => (
            <Grid item xs={12} md={6} lg={4} key={p.id}>
              <Card variant="outlined">
                <CardActionArea component={RouterLink} to={`/projects/${p.slug}`}>
                  <CardContent>
                    <Stack direction="row" justifyContent="space-between" alignItems="center">
                      <Typography variant="h6" component="h2">
                        {p.name}
                      </Typography>
                      <Chip size="small" label={ROLE_LABEL[p.myRole]} />
                    </Stack>
                    <Typography color="text.secondary" variant="body2">
                      {p.slug} · {p.queues.length} queue{p.queues.length === 1 ? '' : 's'} · created{' '}
                      {formatTime(p.createdAt)}
                    </Typography>
                  </CardContent>
                </CardActionArea>
              </Card>
            </Grid>
          ))}
        </Grid>
      )}
    </>
  );
}
