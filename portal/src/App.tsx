import { Button } from '@mui/material';
import { Link as RouterLink, Route, Routes } from 'react-router-dom';
import { AuthGate } from './auth/AuthGate';
import { Empty } from './components/states';
import { Shell } from './Shell';
import { JobDetailPage } from './pages/job/JobDetailPage';
import { JobsPage } from './pages/jobs/JobsPage';
import { AdminPage, BillingPage, ClustersPage, OverviewPage } from './pages/plannedPages';
import { ProjectPage } from './pages/projects/ProjectPage';
import { ProjectsPage } from './pages/projects/ProjectsPage';
import { SubmitPage } from './pages/submit/SubmitPage';

export function AppRoutes() {
  return (
    <Routes>
      <Route path="/" element={<OverviewPage />} />
      <Route path="/jobs" element={<JobsPage />} />
      <Route path="/jobs/:id" element={<JobDetailPage />} />
      <Route path="/submit" element={<SubmitPage />} />
      <Route path="/projects" element={<ProjectsPage />} />
      <Route path="/projects/:slug" element={<ProjectPage />} />
      <Route path="/clusters" element={<ClustersPage />} />
      <Route path="/billing" element={<BillingPage />} />
      <Route path="/admin" element={<AdminPage />} />
      <Route
        path="*"
        element={
          <Empty title="Page not found">
            <Button component={RouterLink} to="/">
              Go to the overview
            </Button>
          </Empty>
        }
      />
    </Routes>
  );
}

export function App() {
  return (
    <AuthGate>
      <Shell>
        <AppRoutes />
      </Shell>
    </AuthGate>
  );
}
