#!/usr/bin/env node
// Browser test of the portal against a real `grus-api serve --dev`.
//
// Starts, on free ports: a throwaway Redis, grus-api on a fresh PostgreSQL database
// (127.0.0.1:5432, user postgres, trust), and `vite preview` of portal/dist proxying /graphql
// and /auth to the API (grus-api does not serve the portal's files yet). Then, in Debian's
// chromium through playwright-core: signs in through the dev login, creates data through
// GraphQL, visits every page, saves a screenshot of each to e2e/artifacts/, and fails on any
// console error. Needs: `npm run build` done, the grus-api binary (GRUS_API_BIN, else
// $CARGO_TARGET_DIR/debug/grus-api, else ../target/debug/grus-api), psql, redis-server,
// /usr/bin/chromium (CHROMIUM to override).
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const portal = path.resolve(here, '..');
const artifacts = path.join(here, 'artifacts');
const apiBin =
  process.env.GRUS_API_BIN ??
  [process.env.CARGO_TARGET_DIR && path.join(process.env.CARGO_TARGET_DIR, 'debug/grus-api'), path.resolve(portal, '../target/debug/grus-api')].find(
    (p) => p && existsSync(p),
  );
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const pg = { host: '127.0.0.1', port: '5432', user: 'postgres' };
const db = `grus_portal_e2e_${process.pid}`;

const children = [];
const log = (...a) => console.log('[e2e]', ...a);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function start(name, cmd, args, env = {}) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = [];
  child.stdout.on('data', (d) => out.push(d));
  child.stderr.on('data', (d) => out.push(d));
  child.on('exit', (code) => code && log(`${name} exited with ${code}`));
  children.push({ name, child, out });
  return child;
}

async function waitFor(url, what, ms = 60000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const r = await fetch(url);
      if (r.status < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not come up at ${url}`);
}

const psql = (sql, database = 'postgres') =>
  execFileSync('psql', ['-h', pg.host, '-p', pg.port, '-U', pg.user, '-d', database, '-v', 'ON_ERROR_STOP=1', '-qAtc', sql], {
    encoding: 'utf8',
  }).trim();

let apiUrl;
async function gql(user, query, variables = {}) {
  const r = await fetch(`${apiUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-grus-dev-user': user },
    body: JSON.stringify({ query, variables }),
  });
  return r.json();
}
async function gqlOk(user, query, variables) {
  const r = await gql(user, query, variables);
  if (r.errors) throw new Error(`GraphQL as ${user}: ${JSON.stringify(r.errors)}`);
  return r.data;
}

const failures = [];
let page;
const consoleErrors = [];
const check = (ok, what) => {
  if (ok) log(`ok: ${what}`);
  else {
    log(`FAIL: ${what}`);
    failures.push(what);
  }
};

async function main() {
  if (!apiBin) throw new Error('no grus-api binary: cargo build -p grus-api, or set GRUS_API_BIN');
  if (!existsSync(path.join(portal, 'dist/index.html'))) throw new Error('no portal/dist: npm run build first');
  if (!existsSync(chromiumPath)) throw new Error(`no chromium at ${chromiumPath} (apt-get install -y chromium)`);
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });

  const [redisPort, apiPort, webPort] = [await freePort(), await freePort(), await freePort()];
  psql(`CREATE DATABASE ${db}`);
  start('redis', 'redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  apiUrl = `http://127.0.0.1:${apiPort}`;
  start('grus-api', apiBin, ['serve', '--dev', '--listen', `127.0.0.1:${apiPort}`], {
    GRUS_DATABASE_URL: `postgres://${pg.user}@${pg.host}:${pg.port}/${db}`,
    GRUS_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    RUST_LOG: 'warn',
  });
  await waitFor(`${apiUrl}/healthz`, 'grus-api');
  const vite = path.join(portal, 'node_modules/.bin/vite');
  start('vite preview', vite, ['preview', '--port', String(webPort), '--strictPort', '--host', '127.0.0.1'], {
    GRUS_API_URL: apiUrl,
  });
  const web = `http://127.0.0.1:${webPort}`;
  await waitFor(web, 'vite preview');
  log(`api ${apiUrl}, portal ${web}, database ${db}`);

  // --- data, through GraphQL: alice is platform admin and owns project vision; bob is not in it.
  await gqlOk('alice', '{ me { id } }');
  await gqlOk('bob', '{ me { id } }');
  psql(`UPDATE users SET platform_admin = true WHERE subject = 'dev:alice'`, db);
  const { createTenant } = await gqlOk('alice', 'mutation { createTenant(slug: "acme", name: "Acme") { id } }');
  const { createProject } = await gqlOk(
    'alice',
    'mutation($t: ID!) { createProject(tenantId: $t, slug: "vision", name: "Vision") { id queues { id } } }',
    { t: createTenant.id },
  );
  await gqlOk('alice', 'mutation($t: ID!) { createProject(tenantId: $t, slug: "nlp", name: "NLP") { id } }', { t: createTenant.id });
  await gqlOk('alice', 'mutation($q: ID!) { updateQuota(queueId: $q, resource: "gpu", guaranteed: 8000, limit: 16000) { id } }', {
    q: createProject.queues[0].id,
  });
  const submit = `mutation($input: JobInput!) { submitJob(input: $input) { job { id state } } }`;
  const job = (name, replicas) => ({
    input: {
      name,
      project: 'vision',
      priority: 'high',
      gang: { minMembers: replicas },
      labels: [{ key: 'grus.io/sim-duration-s', value: '30' }],
      tasks: [{ name: 'main', replicas, image: 'busybox', command: ['sleep', '30'], resources: { gpus: 1, cpuMilli: 1000, memoryMib: 1024 } }],
    },
  });
  const gang = (await gqlOk('alice', submit, job('gang-train', 2))).submitJob.job;
  const other = (await gqlOk('alice', submit, job('to-cancel', 1))).submitJob.job;
  await gqlOk('alice', 'mutation($id: ID!) { cancelJob(id: $id) { id } }', { id: other.id });
  const refused = await gql('bob', '{ project(slug: "vision") { id } }');
  check(!!refused.errors && !refused.data?.project, `GraphQL refuses bob (not a member) project vision: ${refused.errors?.[0]?.extensions?.code}`);

  // --- the browser
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  const context = await browser.newContext({ viewport: { width: 1366, height: 820 } });
  page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    // The dev-mode probe: /auth/session answers 404 on a --dev server without OIDC routes.
    if (/Failed to load resource.*404/.test(m.text()) && m.location().url.endsWith('/auth/session')) return;
    consoleErrors.push(`${page.url()}: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => consoleErrors.push(`${page.url()}: ${e.message}`));
  let n = 0;
  const shot = async (name) => {
    await page.waitForLoadState('networkidle').catch(() => {});
    await page.screenshot({ path: path.join(artifacts, `${String(++n).padStart(2, '0')}-${name}.png`), fullPage: true });
  };

  await page.goto(web);
  await page.getByRole('heading', { name: /dev login/ }).waitFor();
  await shot('dev-login');
  await page.getByLabel('User name').fill('alice');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('current-user').waitFor();
  check((await page.getByTestId('current-user').textContent()) === 'alice', 'app bar shows the user');
  check((await page.getByTestId('current-role').textContent()) === 'platform admin', 'app bar shows the role');
  await page.getByText('Not available on this server yet').waitFor();
  await shot('overview');

  await page.getByRole('link', { name: 'Projects', exact: true }).click();
  await page.getByRole('heading', { name: 'Vision' }).waitFor();
  await shot('projects');
  await page.getByRole('heading', { name: 'Vision' }).click();
  await page.getByRole('heading', { name: 'Queues', exact: true }).waitFor();
  check((await page.getByRole('progressbar').count()) > 0, 'project page draws quota bars');
  await shot('project');

  await page.goto(`${web}/jobs?project=vision`);
  await page.getByRole('link', { name: 'gang-train' }).waitFor();
  check((await page.getByRole('link', { name: 'to-cancel' }).count()) === 1, 'jobs table lists both jobs');
  await shot('jobs');
  await page.goto(`${web}/jobs?project=vision&state=CANCELLED`);
  await page.getByRole('link', { name: 'to-cancel' }).waitFor();
  check((await page.getByRole('link', { name: 'gang-train' }).count()) === 0, 'state filter in the URL narrows the table');

  await page.goto(`${web}/jobs/${gang.id}`);
  await page.getByRole('heading', { name: 'gang-train' }).waitFor();
  await page.getByRole('list', { name: 'Event timeline' }).waitFor();
  await shot('job-detail');

  await page.goto(`${web}/submit?project=vision`);
  await page.getByLabel('Job name', { exact: false }).first().fill('from-portal');
  await page.getByLabel('Image').fill('busybox');
  await page.getByRole('tab', { name: 'YAML' }).click();
  await page.getByText('name: from-portal').waitFor();
  await shot('submit-yaml');
  await page.getByRole('tab', { name: 'Form' }).click();
  await shot('submit-form');
  await page.getByRole('button', { name: 'Submit' }).click();
  await page.getByRole('heading', { name: 'from-portal' }).waitFor();
  check(/\/jobs\/\d+$/.test(page.url()), 'submitting goes to the new job');
  await page.getByRole('button', { name: 'Cancel job' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel job' }).click();
  await page.getByTestId('job-state').filter({ hasText: 'CANCELLED' }).waitFor();
  await shot('job-cancelled');

  for (const [link, name] of [
    ['Clusters', 'clusters'],
    ['Billing', 'billing'],
    ['Admin', 'admin'],
  ]) {
    await page.getByRole('link', { name: link, exact: true }).click();
    await page.getByRole('heading', { name: link, level: 1 }).waitFor();
    await shot(name);
  }
  check((await page.getByText('acme').count()) > 0, 'admin page lists tenants');

  // Log out; bob signs in and is refused project vision.
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByLabel('User name').fill('bob');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('current-user').waitFor();
  await page.goto(`${web}/projects/vision`);
  await page.getByRole('alert').waitFor();
  const refusal = await page.getByRole('alert').textContent();
  check(/access|not found/i.test(refusal ?? ''), `bob is refused project vision in the portal: "${refusal}"`);
  await shot('refused');

  await browser.close();
  check(consoleErrors.length === 0, `no console errors${consoleErrors.length ? `: ${consoleErrors.join(' | ')}` : ''}`);
}

let code = 0;
try {
  await main();
  if (failures.length) code = 1;
} catch (e) {
  log('error:', e.stack ?? e);
  if (consoleErrors.length) log('console errors:', consoleErrors.join(' | '));
  await page?.screenshot({ path: path.join(artifacts, 'failure.png'), fullPage: true }).catch(() => {});
  code = 1;
} finally {
  for (const { name, child, out } of children.reverse()) {
    child.kill('SIGTERM');
    writeFileSync(path.join(artifacts, `${name.replace(/\W+/g, '-')}.log`), Buffer.concat(out));
  }
  await new Promise((r) => setTimeout(r, 500));
  try {
    psql(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  } catch (e) {
    log('could not drop the database:', e.message);
  }
  log(code === 0 ? 'passed' : `FAILED (${failures.join('; ') || 'error'})`, `— screenshots in ${artifacts}`);
  process.exit(code);
}
