import {
  AppBar,
  Box,
  Button,
  Chip,
  Drawer,
  IconButton,
  List,
  ListItemButton,
  ListItemIcon,
  ListItemText,
  Toolbar,
  Typography,
  useMediaQuery,
  useTheme,
} from '@mui/material';
import MenuIcon from '@mui/icons-material/Menu';
import DashboardIcon from '@mui/icons-material/Dashboard';
import ListAltIcon from '@mui/icons-material/ListAlt';
import HourglassTopIcon from '@mui/icons-material/HourglassTop';
import HubIcon from '@mui/icons-material/Hub';
import AddBoxIcon from '@mui/icons-material/AddBox';
import FolderIcon from '@mui/icons-material/Folder';
import DnsIcon from '@mui/icons-material/Dns';
import PaymentsIcon from '@mui/icons-material/Payments';
import AdminPanelSettingsIcon from '@mui/icons-material/AdminPanelSettings';
import { useEffect, useMemo, useState } from 'react';
import type { ReactNode } from 'react';
import { NavLink, useLocation } from 'react-router-dom';
import { useQuery } from 'urql';
import { MeQuery, ProjectsQuery } from './api/operations';
import { CurrentProjectContext, useSession } from './auth/context';
import type { CurrentProject } from './auth/context';
import { ROLE_LABEL, ROLE_RANK } from './components/format';
import type { RoleName } from './gql/graphql';

const DRAWER = 200;

const NAV = [
  { to: '/', label: 'Overview', icon: <DashboardIcon /> },
  { to: '/jobs', label: 'Jobs', icon: <ListAltIcon /> },
  { to: '/queue', label: 'Queue', icon: <HourglassTopIcon /> },
  { to: '/services', label: 'Services', icon: <HubIcon /> },
  { to: '/submit', label: 'Submit', icon: <AddBoxIcon /> },
  { to: '/projects', label: 'Projects', icon: <FolderIcon /> },
  { to: '/clusters', label: 'Clusters', icon: <DnsIcon /> },
  { to: '/billing', label: 'Billing', icon: <PaymentsIcon /> },
  { to: '/admin', label: 'Admin', icon: <AdminPanelSettingsIcon /> },
];

/** The role the app bar shows: platform admin, the role in the page's project, or the highest. */
export function roleLabel(platformAdmin: boolean, current: CurrentProject | null, roles: RoleName[]): string {
  if (platformAdmin) return ROLE_LABEL.PLATFORM_ADMIN;
  if (current) return `${ROLE_LABEL[current.role as RoleName] ?? current.role} in ${current.slug}`;
  if (roles.length === 0) return 'no project yet';
  const top = roles.reduce((a, b) => (ROLE_RANK[b] > ROLE_RANK[a] ? b : a));
  return ROLE_LABEL[top];
}

export function Shell({ children }: { children: ReactNode }) {
  const { logout, session } = useSession();
  const [current, setCurrent] = useState<CurrentProject | null>(null);
  const [me] = useQuery({ query: MeQuery });
  const [projects] = useQuery({ query: ProjectsQuery });
  const location = useLocation();
  const user = me.data?.me;
  const role = user
    ? roleLabel(user.platformAdmin, current, (projects.data?.projects ?? []).map((p) => p.myRole))
    : undefined;
  const ctx = useMemo(() => ({ current, setCurrent }), [current]);
  // On a phone the navigation is a drawer opened from the app bar, not a column over the page.
  const narrow = useMediaQuery(useTheme().breakpoints.down('md'));
  const [navOpen, setNavOpen] = useState(false);
  useEffect(() => setNavOpen(false), [location.pathname, narrow]);

  return (
    <CurrentProjectContext.Provider value={ctx}>
      <Box sx={{ display: 'flex', minHeight: '100vh' }}>
        <Box
          component="a"
          href="#main"
          sx={{
            position: 'absolute',
            left: -9999,
            zIndex: (t) => t.zIndex.tooltip,
            '&:focus': { left: 8, top: 8, p: 1, bgcolor: 'background.paper' },
          }}
        >
          Skip to content
        </Box>
        <AppBar position="fixed" sx={{ zIndex: (t) => t.zIndex.drawer + 1 }}>
          <Toolbar sx={{ gap: { xs: 1, sm: 2 } }}>
            {narrow && (
              <IconButton color="inherit" edge="start" aria-label="Open navigation" onClick={() => setNavOpen(true)}>
                <MenuIcon />
              </IconButton>
            )}
            <Typography variant="h6" component="div" sx={{ flexGrow: 1 }}>
              Grus
            </Typography>
            {session.mode === 'dev' && (
              // Every page says so: in dev mode the server trusts the name the browser sends.
              <Chip
                label={narrow ? 'DEV LOGIN' : 'DEV LOGIN · not authenticated'}
                color="warning"
                size="small"
                data-testid="dev-login-banner"
                title="Development mode (grus dev / grus-api --dev): the server trusts the user name sent in X-Grus-Dev-User. Loopback only; never a shared deployment."
              />
            )}
            {user ? (
              <Box aria-label="Signed in user" sx={{ display: 'flex', alignItems: 'center', gap: 1 }}>
                <Typography
                  component="span"
                  data-testid="current-user"
                  noWrap
                  sx={{ maxWidth: { xs: 90, sm: 240 }, display: { xs: 'none', sm: 'inline' } }}
                >
                  {user.displayName ?? user.subject}
                </Typography>
                <Chip
                  size="small"
                  label={role}
                  data-testid="current-role"
                  sx={{ bgcolor: 'rgba(255,255,255,0.2)', color: 'inherit' }}
                />
              </Box>
            ) : (
              <Typography component="span">{me.error ? 'unknown user' : '…'}</Typography>
            )}
            <Button color="inherit" onClick={logout} sx={{ flexShrink: 0 }}>
              Log out
            </Button>
          </Toolbar>
        </AppBar>
        <Drawer
          variant={narrow ? 'temporary' : 'permanent'}
          open={narrow ? navOpen : true}
          onClose={() => setNavOpen(false)}
          ModalProps={{ keepMounted: true }}
          sx={{
            width: narrow ? 0 : DRAWER,
            flexShrink: 0,
            '& .MuiDrawer-paper': { width: DRAWER, boxSizing: 'border-box' },
          }}
        >
          <Toolbar />
          <nav aria-label="Main">
            <List>
              {NAV.map((n) => {
                const active = n.to === '/' ? location.pathname === '/' : location.pathname.startsWith(n.to);
                return (
                  <ListItemButton
                    key={n.to}
                    component={NavLink}
                    to={n.to}
                    selected={active}
                    aria-current={active ? 'page' : undefined}
                  >
                    <ListItemIcon sx={{ minWidth: 36 }}>{n.icon}</ListItemIcon>
                    <ListItemText primary={n.label} />
                  </ListItemButton>
                );
              })}
            </List>
          </nav>
        </Drawer>
        <Box component="main" id="main" tabIndex={-1} sx={{ flexGrow: 1, p: { xs: 1.5, sm: 3 }, minWidth: 0, outline: 'none' }}>
          <Toolbar />
          {children}
        </Box>
      </Box>
    </CurrentProjectContext.Provider>
  );
}
