import { lazy, Suspense } from 'react';
import type { ComponentType } from 'react';
import { Route, Routes, useLocation } from 'react-router-dom';
import { AuthGate } from './auth/AuthGate';
import { Loading, NotFound } from './components/states';
import { Shell } from './Shell';

// One chunk per page (React.lazy): the first load fetches the shell and the page it opens only;
// the data grid, the charts and the YAML editor come with the pages that use them.
const page = <M,>(load: () => Promise<M>, name: keyof M) =>
  lazy(async () => ({ default: (await load())[name] as ComponentType }));

const OverviewPage = page(() => import('./pages/overview/OverviewPage'), 'OverviewPage');
const JobsPage = page(() => import('./pages/jobs/JobsPage'), 'JobsPage');
const JobDetailPage = page(() => import('./pages/job/JobDetailPage'), 'JobDetailPage');
const QueuePage = page(() => import('./pages/queue/QueuePage'), 'QueuePage');
const ServicesPage = page(() => import('./pages/services/ServicesPage'), 'ServicesPage');
const ServicePage = page(() => import('./pages/services/ServicePage'), 'ServicePage');
const NewServicePage = page(() => import('./pages/services/NewServicePage'), 'NewServicePage');
const SubmitPage = page(() => import('./pages/submit/SubmitPage'), 'SubmitPage');
const ProjectsPage = page(() => import('./pages/projects/ProjectsPage'), 'ProjectsPage');
const ProjectPage = page(() => import('./pages/projects/ProjectPage'), 'ProjectPage');
const ClustersPage = page(() => import('./pages/clusters/ClustersPage'), 'ClustersPage');
const BillingPage = page(() => import('./pages/billing/BillingPage'), 'BillingPage');
const AdminPage = page(() => import('./pages/admin/AdminPage'), 'AdminPage');

export function AppRoutes() {
  // One boundary per page: the page left behind unmounts instead of being hidden while the next
  // one loads (a hidden data grid measures a zero width and says so on the console).
  const { pathname } = useLocation();
  return (
    <Suspense key={pathname} fallback={<Loading label="Loading the page" />}>
      <Routes>
        <Route path="/" element={<OverviewPage />} />
        <Route path="/jobs" element={<JobsPage />} />
        <Route path="/jobs/:id" element={<JobDetailPage />} />
        <Route path="/queue" element={<QueuePage />} />
        <Route path="/services" element={<ServicesPage />} />
        <Route path="/services/new" element={<NewServicePage />} />
        <Route path="/services/:project/:name" element={<ServicePage />} />
        <Route path="/submit" element={<SubmitPage />} />
        <Route path="/projects" element={<ProjectsPage />} />
        <Route path="/projects/:slug" element={<ProjectPage />} />
        <Route path="/clusters" element={<ClustersPage />} />
        <Route path="/billing" element={<BillingPage />} />
        <Route path="/admin" element={<AdminPage />} />
        <Route
          path="*"
          element={<NotFound />}
        />
      </Routes>
    </Suspense>
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
