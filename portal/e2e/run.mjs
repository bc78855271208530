#!/usr/bin/env node
// Browser test of the portal against the real control plane: the issue's scenario.
//
// Starts, on free ports: a throwaway Redis, a real OpenID Connect provider (npm oidc-provider,
// testkit/oidc/provider.mjs, as the api's own login tests use it), grus-api in OIDC mode on a
// fresh PostgreSQL database (127.0.0.1:5432, user postgres, trust) serving the built portal
// (`--portal-dir dist`), and, once the cluster is registered in the portal, a simulated cluster
// (`grus-agent --backend sim`). Then, in one Debian chromium (playwright-core), two people:
//
// - alice (platform admin by --platform-admin-subject) logs in through OIDC, registers the
//   cluster (one-time token and helm command), sets a price, creates an API token, dry-runs and
//   submits a gang job in the form, watches it reach Succeeded on the job page without a
//   reload (subscriptions), sees its cost on the billing page and downloads the FOCUS CSV;
// - bob logs in too; he is a member of project nlp only, and is refused project vision and
//   alice's job.
//
// Every page gets a screenshot in e2e/artifacts/ (with the servers' logs and the CSV). Any
// console error or uncaught page error fails the test. Waits are on conditions, with generous
// limits for a loaded 2-core machine. Needs: `npm run build` done; the grus-api and grus-agent
// binaries (GRUS_API_BIN / GRUS_AGENT_BIN, else $CARGO_TARGET_DIR/debug, else ../target/debug);
// psql, redis-server; /usr/bin/chromium (CHROMIUM to override); node_modules of
// testkit/oidc (installed with `npm ci` when missing).
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const portal = path.resolve(here, '..');
const repo = path.resolve(portal, '..');
const artifacts = path.join(here, 'artifacts');
const oidcDir = path.join(repo, 'testkit/oidc');
const binary = (name, env) =>
  process.env[env] ??
  [process.env.CARGO_TARGET_DIR && path.join(process.env.CARGO_TARGET_DIR, 'debug', name), path.join(repo, 'target/debug', name)].find(
    (p) => p && existsSync(p),
  );
const apiBin = binary('grus-api', 'GRUS_API_BIN');
const agentBin = binary('grus-agent', 'GRUS_AGENT_BIN');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const pg = { host: '127.0.0.1', port: '5432', user: 'postgres' };
const db = `grus_portal_e2e_${process.pid}`;
// Generous: a loaded 2-core machine runs the api, the agent, the provider and chromium.
const WAIT = 120_000;
const CLUSTER = 'sim-east';
const GPU_MODEL = 'A100-80GB';

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

function start(name, cmd, args, { env = {}, cwd } = {}) {
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const out = [];
  child.stdout.on('data', (d) => out.push(d));
  child.stderr.on('data', (d) => out.push(d));
  child.on('exit', (code, signal) => (code || (signal && signal !== 'SIGTERM')) && log(`${name} exited: ${code ?? signal}`));
  children.push({ name, child, out });
  return child;
}

/** The first stdout line of `child` (the provider prints its issuer there once it listens). */
function firstLine(child, what) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) {
        child.stdout.off('data', onData);
        resolve(buf.slice(0, nl));
      }
    };
    child.stdout.on('data', onData);
    child.on('exit', () => reject(new Error(`${what} exited before it was ready`)));
  });
}

async function waitFor(url, what, ms = WAIT) {
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

const failures = [];
const consoleErrors = [];
const check = (ok, what) => {
  if (ok) log(`ok: ${what}`);
  else {
    log(`FAIL: ${what}`);
    failures.push(what);
  }
};

/** GraphQL from inside a signed-in page: its session cookie plus the CSRF token the portal sends. */
async function gqlIn(page, query, variables = {}) {
  return page.evaluate(
    async ({ query, variables }) => {
      const session = await (await fetch('/auth/session')).json();
      const r = await fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-grus-csrf': session.csrfToken },
        body: JSON.stringify({ query, variables }),
      });
      return r.json();
    },
    { query, variables },
  );
}
async function gqlOk(page, query, variables) {
  const r = await gqlIn(page, query, variables);
  if (r.errors) throw new Error(`GraphQL: ${JSON.stringify(r.errors)}`);
  return r.data;
}

let shots = 0;
const pages = [];
async function shot(page, name) {
  // Charts and grids settle after their data; the page is idle once no request is in flight.
  await page.waitForLoadState('networkidle').catch(() => {});
  await page.screenshot({ path: path.join(artifacts, `${String(++shots).padStart(2, '0')}-${name}.png`), fullPage: true });
}

/**
 * A signed-in person: own browser context (cookies), pages watched for console errors. The
 * provider logs in the subject set by POST /test/subject (a person would type it into its form).
 */
async function signIn(browser, web, issuer, who) {
  const set = await fetch(`${issuer}/test/subject`, { method: 'POST', body: JSON.stringify({ sub: who }) });
  if (!set.ok) throw new Error(`provider /test/subject: HTTP ${set.status}`);
  const context = await browser.newContext({ viewport: { width: 1366, height: 820 }, acceptDownloads: true });
  context.setDefaultTimeout(WAIT);
  const page = await context.newPage();
  pages.push(page);
  // The portal's pages only: the provider's own pages (its logout form loads a web font) are
  // the test double's, not ours.
  const ours = () => page.url().startsWith(web);
  page.on('console', (m) => {
    if (m.type() !== 'error' || !ours()) return;
    // The signed-out probe: GET /auth/session answers 401 before the login, by design.
    if (/status of 401/.test(m.text()) && m.location().url.endsWith('/auth/session')) return;
    consoleErrors.push(`${who} ${page.url()}: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => ours() && consoleErrors.push(`${who} ${page.url()}: ${e.message}`));
  await page.goto(web);
  await page.getByTestId('current-user').waitFor();
  return page;
}

async function main() {
  if (!apiBin) throw new Error('no grus-api binary: cargo build -p grus-api -p grus-agent, or set GRUS_API_BIN');
  if (!agentBin) throw new Error('no grus-agent binary: cargo build -p grus-api -p grus-agent, or set GRUS_AGENT_BIN');
  if (!existsSync(path.join(portal, 'dist/index.html'))) throw new Error('no portal/dist: npm run build first');
  if (!existsSync(chromiumPath)) throw new Error(`no chromium at ${chromiumPath} (apt-get install -y chromium)`);
  if (!existsSync(path.join(oidcDir, 'node_modules/oidc-provider'))) {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: oidcDir, stdio: 'inherit' });
  }
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });
  state = mkdtempSync(path.join(os.tmpdir(), 'grus-portal-e2e-'));

  const [redisPort, apiPort] = [await freePort(), await freePort()];
  const web = `http://127.0.0.1:${apiPort}`;
  psql(`CREATE DATABASE ${db}`);
  start('redis', 'redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const provider = start('oidc-provider', 'node', ['provider.mjs'], {
    cwd: oidcDir,
    env: {
      GRUS_TEST_REDIRECT_URI: `${web}/auth/callback`,
      GRUS_TEST_POST_LOGOUT_URI: `${web}/`,
      GRUS_TEST_AUDIENCE: 'https://api.grus.test',
      GRUS_TEST_SUBJECT: 'alice',
    },
  });
  const { issuer } = JSON.parse(await firstLine(provider, 'the OIDC provider'));
  start(
    'grus-api',
    apiBin,
    [
      'serve',
      '--listen',
      `127.0.0.1:${apiPort}`,
      '--portal-dir',
      path.join(portal, 'dist'),
      '--oidc-issuer',
      issuer,
      '--oidc-audience',
      'https://api.grus.test',
      '--oidc-client-id',
      'grus-portal',
      '--oidc-client-secret',
      'grus-portal-secret',
      '--public-url',
      web,
      '--platform-admin-subject',
      'alice',
    ],
    {
      env: {
        DATABASE_URL: `postgres://${pg.user}@${pg.host}:${pg.port}/${db}`,
        REDIS_URL: redisUrl,
        RUST_LOG: 'info',
      },
    },
  );
  await waitFor(`${web}/healthz`, 'grus-api');
  log(`portal and api ${web}, issuer ${issuer}, database ${db}`);

  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  try {
    // --- alice logs in through the provider (authorization code + PKCE, session cookie).
    const alice = await signIn(browser, web, issuer, 'alice');
    check((await alice.getByTestId('current-user').textContent()) === 'Test alice', 'app bar shows the signed-in user');
    check((await alice.getByTestId('current-role').textContent()) === 'platform admin', 'app bar shows the role');
    await alice.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await alice.getByTestId('stat-clusters').waitFor();
    await shot(alice, 'overview-empty');

    // --- bob logs in once (addMember needs a user that has signed in).
    const bob = await signIn(browser, web, issuer, 'bob');
    check((await bob.getByTestId('current-user').textContent()) === 'Test bob', 'bob is signed in in his own session');
    const bobSubject = (await gqlOk(bob, '{ me { subject } }')).me.subject;

    // --- tenancy through the API as alice: tenant acme, projects vision (alice) and nlp (bob).
    const { createTenant } = await gqlOk(alice, 'mutation { createTenant(slug: "acme", name: "Acme") { id } }');
    const { createProject: vision } = await gqlOk(
      alice,
      'mutation($t: ID!) { createProject(tenantId: $t, slug: "vision", name: "Vision") { id queues { id } } }',
      { t: createTenant.id },
    );
    const { createProject: nlp } = await gqlOk(alice, 'mutation($t: ID!) { createProject(tenantId: $t, slug: "nlp", name: "NLP") { id } }', {
      t: createTenant.id,
    });
    await gqlOk(alice, 'mutation($p: ID!, $s: String!) { addMember(projectId: $p, subject: $s, role: MEMBER) }', {
      p: nlp.id,
      s: bobSubject,
    });

    // --- Admin page: register the cluster (token and helm command shown once), a price, a token.
    await alice.getByRole('link', { name: 'Admin', exact: true }).click();
    await alice.getByRole('heading', { name: 'Admin', level: 1 }).waitFor();
    const register = alice.getByRole('form', { name: 'Register a cluster' });
    await register.getByLabel('Cluster id').fill(CLUSTER);
    await register.getByLabel('Display name').fill('Simulated east');
    await register.getByRole('button', { name: 'Register cluster' }).click();
    const agentToken = (await alice.getByTestId('agent-token').textContent())?.trim() ?? '';
    const helm = (await alice.getByTestId('helm-command').textContent()) ?? '';
    // The install command names the chart and the cluster; the token is shown beside it (the agent
    // gets its Redis credentials from the chart's secret, not from the command line).
    check(agentToken.length >= 32 && helm.includes('helm upgrade --install') && helm.includes('cluster.id='), 'registering a cluster shows its one-time token and the helm command');
    const prices = alice.getByRole('form', { name: 'Set a price' });
    await prices.getByLabel('GPU model').fill(GPU_MODEL);
    await prices.getByLabel('List price per GPU-hour').fill('36.00');
    await prices.getByLabel('Effective from').fill('2026-01-01');
    await prices.getByRole('button', { name: 'Set price' }).click();
    await alice.getByText(`Price of ${GPU_MODEL} set`).waitFor();
    await alice.getByRole('gridcell', { name: '36.000000' }).first().waitFor();
    const tokens = alice.getByRole('form', { name: 'Create an API token' });
    await tokens.getByLabel('Token name').fill('ci');
    await tokens.getByRole('button', { name: 'Create token' }).click();
    check(((await alice.getByTestId('token-secret').textContent()) ?? '').length > 20, 'a new API token is shown once');
    await shot(alice, 'admin');

    // The agent of the registered cluster: a simulated cluster of 2 nodes x 4 GPUs.
    start('grus-agent', agentBin, [
      '--cluster',
      CLUSTER,
      '--redis',
      redisUrl,
      '--backend',
      'sim',
      '--sim-nodes',
      `2x4x${GPU_MODEL}`,
      '--state-dir',
      path.join(state, 'agent'),
    ]);

    // --- Clusters page: the cluster turns healthy and reports its GPUs, live (clusterUpdates).
    await alice.getByRole('link', { name: 'Clusters', exact: true }).click();
    const cluster = alice.getByRole('region', { name: 'Cluster Simulated east' });
    await cluster.waitFor();
    await cluster.getByTestId(`health-${CLUSTER}`).filter({ hasText: /^healthy$/ }).waitFor();
    await cluster.getByText(new RegExp(`${GPU_MODEL}: \\d+ free of 8`)).waitFor();
    check(true, 'the clusters page shows the new cluster healthy with its GPUs, without a reload');
    await shot(alice, 'clusters');

    // --- Projects, then submit a gang job to vision in the form: dry run first, then submit.
    await alice.getByRole('link', { name: 'Projects', exact: true }).click();
    await alice.getByRole('heading', { name: 'Vision' }).waitFor();
    await shot(alice, 'projects');
    await alice.getByRole('heading', { name: 'Vision' }).click();
    await alice.getByRole('heading', { name: 'Queues', exact: true }).waitFor();
    // A quota is entered in GPUs (not milli-GPUs): 4 guaranteed, 8 at most.
    const quota = alice.getByRole('form', { name: 'Set a quota' });
    await quota.getByLabel('Resource').fill('gpu');
    await quota.getByLabel('Guaranteed (GPUs)').fill('4');
    await quota.getByLabel('Limit (GPUs)').fill('8');
    await quota.getByRole('button', { name: 'Set quota' }).click();
    await alice.getByRole('progressbar', { name: 'gpu: 0 GPU used of 4 GPU guaranteed, limit 8 GPU' }).waitFor();
    check(true, 'a quota entered as 4 GPUs reads 4 GPUs');
    // A monthly budget far above what the test spends.
    const budgetForm = alice.getByRole('form', { name: 'Set the budget' });
    await budgetForm.getByLabel('Amount a month').fill('100000');
    await budgetForm.getByRole('button', { name: 'Save budget' }).click();
    await alice.getByTestId('budget-status').filter({ hasText: 'within budget' }).waitFor();
    await shot(alice, 'project');
    // A second page of alice's stays on the clusters page: the GPUs' utilization must change
    // there, without a reload, once the job runs.
    const watcher = await alice.context().newPage();
    pages.push(watcher);
    await watcher.goto(`${web}/clusters`);
    await watcher.getByRole('region', { name: 'Cluster Simulated east' }).getByRole('grid').waitFor();
    const idle = await watcher.getByRole('gridcell', { name: /^[1-9]\d* %$/ }).count();
    check(idle === 0, `no GPU is busy before the job (${idle} busy cells)`);
    await watcher.evaluate(() => (window.__grusNoReload = true));
    await alice.getByRole('link', { name: 'Submit a job' }).click();
    await alice.getByRole('heading', { name: 'Submit a job' }).waitFor();
    check(new URL(alice.url()).searchParams.get('project') === 'vision', 'the project page submits to its project');
    await alice.getByLabel('Job name').fill('gang-train');
    await alice.getByLabel('Gang (all or nothing)').check();
    await alice.getByLabel('Gang minimum members').fill('2');
    await alice.getByLabel('Labels').fill('grus.io/sim-duration-s=30');
    await alice.getByLabel('Replicas').fill('2');
    await alice.getByLabel('Image').fill('ghcr.io/example/train:1');
    await alice.getByLabel('GPUs', { exact: true }).fill('1');
    await alice.getByRole('button', { name: 'Dry run' }).click();
    const dry = alice.getByTestId('dry-run');
    await dry.waitFor();
    check(/dispatched to sim-east/.test((await dry.textContent()) ?? ''), `the dry run names the cluster: "${await dry.textContent()}"`);
    await shot(alice, 'submit-dry-run');
    await alice.getByRole('button', { name: 'Submit', exact: true }).click();
    await alice.getByRole('heading', { name: 'gang-train' }).waitFor();
    const jobId = alice.url().match(/\/jobs\/(\d+)$/)?.[1];
    check(!!jobId, 'submitting goes to the new job');
    // A reload would drop this marker: the state below must arrive through the subscription.
    await alice.evaluate(() => (window.__grusNoReload = true));
    const first = (await alice.getByTestId('job-state').textContent()) ?? '';
    check(first !== 'SUCCEEDED', `the job page opened before the job ended (${first})`);
    await shot(alice, 'job-live');
    // While it runs: the job's CPU and memory history, read again without a reload (no event
    // announces a reading).
    await alice.getByTestId('cpu-history-chart').waitFor({ timeout: WAIT });
    await shot(alice, 'job-metrics');
    await watcher.getByRole('gridcell', { name: /^[1-9]\d* %$/ }).first().waitFor({ timeout: WAIT });
    check(await watcher.evaluate(() => window.__grusNoReload === true), 'the clusters page shows the GPUs busy while the job runs, without a reload');
    await shot(watcher, 'clusters-busy');
    await watcher.close();
    await alice.getByTestId('job-state').filter({ hasText: /^SUCCEEDED$/ }).waitFor({ timeout: 3 * WAIT });
    check(await alice.evaluate(() => window.__grusNoReload === true), 'the job reached Succeeded on its page without a reload');
    const replicas = alice.getByRole('table', { name: 'Replicas' });
    check((await replicas.getByRole('cell', { name: CLUSTER }).count()) === 2, 'both gang replicas ran on the cluster');
    await shot(alice, 'job-succeeded');
    // Its output: the last lines of replica 0, read from the agent; search narrows them.
    const logLines = alice.getByLabel('Log lines');
    await logLines.getByText('[sim] exited with code 0').waitFor({ timeout: WAIT });
    await alice.getByLabel('Search').fill('started');
    await logLines.getByText(/\[sim\] started/).waitFor();
    check((await logLines.getByText(/exited with code/).count()) === 0, 'searching the log hides the other lines');
    check(/Cost so far: \d+\.\d{2} /.test((await alice.getByTestId('workload-cost').textContent()) ?? ''), 'the job page shows its cost');
    await shot(alice, 'job-logs');

    // --- The jobs table of vision.
    await alice.goto(`${web}/jobs?project=vision`);
    await alice.getByRole('row', { name: /gang-train/ }).getByText('SUCCEEDED').waitFor();
    await shot(alice, 'jobs');

    // --- Billing: the job's cost per project, then the FOCUS CSV.
    await alice.getByRole('link', { name: 'Billing', exact: true }).click();
    await alice.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();
    const row = alice.getByRole('row', { name: /vision/ });
    await row.waitFor();
    const cells = await row.getByRole('gridcell').allTextContents();
    const [hours, cost] = [Number(cells[1]), Number(cells[2])];
    check(hours > 0 && cost > 0, `the billing page shows the job's GPU-hours and cost for vision: ${cells.join(' | ')}`);
    await shot(alice, 'billing');
    const [download] = await Promise.all([
      alice.waitForEvent('download'),
      alice.getByRole('button', { name: 'Download FOCUS CSV' }).click(),
    ]);
    const csvPath = path.join(artifacts, download.suggestedFilename() || 'focus.csv');
    await download.saveAs(csvPath);
    const csv = readFileSync(csvPath, 'utf8');
    check(csv.split('\r\n')[0].includes('BilledCost') && csv.includes(GPU_MODEL), `the FOCUS CSV downloads with the job's charges (${csv.length} bytes)`);
    await alice.getByText(/^Downloaded /).waitFor();
    // Regrouping shows what the API answers for the new grouping, and back again.
    const groupBy = alice.getByRole('group', { name: 'Group by' });
    await groupBy.getByRole('button', { name: 'Cluster' }).click();
    const byCluster = alice.getByRole('grid');
    await byCluster.getByRole('row', { name: new RegExp(CLUSTER) }).waitFor();
    const clusterRows = await byCluster.getByRole('row').count();
    check(clusterRows === 2 && (await byCluster.getByRole('row', { name: /—/ }).count()) === 0, `grouped by cluster: one row, ${CLUSTER} (${clusterRows - 1})`);
    await groupBy.getByRole('button', { name: 'Project' }).click();
    const byProject = alice.getByRole('grid');
    await byProject.getByRole('row', { name: /vision/ }).waitFor();
    check((await byProject.getByRole('row').count()) === 2, 'grouped by project again: vision only, no rows added');
    await shot(alice, 'billing-regrouped');

    // --- A hard budget the month has already spent refuses the next job, with the reason.
    await alice.goto(`${web}/projects/vision`);
    await alice.getByRole('form', { name: 'Set the budget' }).getByLabel('Amount a month').fill('0.01');
    await alice.getByRole('form', { name: 'Set the budget' }).getByRole('button', { name: 'Save budget' }).click();
    await alice.getByTestId('budget-status').filter({ hasText: 'spent' }).waitFor();
    await alice.getByTestId('budget-burn-down').waitFor();
    await shot(alice, 'budget-spent');
    await alice.goto(`${web}/submit?project=vision`);
    await alice.getByLabel('Job name').fill('over-budget');
    await alice.getByLabel('Image').fill('ghcr.io/example/train:1');
    await alice.getByRole('button', { name: 'Submit', exact: true }).click();
    const refused = alice.getByText(/budget exceeded in project vision/);
    await refused.waitFor();
    check(new URL(alice.url()).pathname === '/submit', 'a job over a spent hard budget is refused at submit, with the reason');
    await shot(alice, 'budget-refusal');
    await alice.goto(`${web}/projects/vision`);
    await alice.getByRole('button', { name: 'Remove' }).click();
    await alice.getByRole('dialog', { name: 'Remove the monthly budget?' }).getByRole('button', { name: 'Remove budget' }).click();
    await alice.getByText('No monthly budget set.').waitFor();

    // --- Overview after the run.
    await alice.getByRole('link', { name: 'Overview', exact: true }).click();
    await alice.getByTestId('stat-allocated').filter({ hasText: '/ 8' }).waitFor();
    await alice.getByRole('list', { name: 'Job counts' }).getByText('SUCCEEDED: 1').waitFor();
    await shot(alice, 'overview');

    // --- An inference service from the form; a synthetic load scales it up, live.
    await alice.goto(`${web}/services/new?project=vision`);
    await alice.getByLabel('Service name').fill('chat');
    await alice.getByLabel('Image').fill('ghcr.io/example/llm:1');
    await alice.getByLabel('Port').fill('8000');
    await alice.getByLabel('Min replicas').fill('1');
    await alice.getByLabel('Max replicas').fill('3');
    await alice.getByLabel('Autoscale between the bounds').check();
    await alice.getByLabel('Target requests per second per replica').fill('10');
    await alice.getByRole('button', { name: 'Apply' }).click();
    await alice.getByRole('heading', { name: 'chat' }).waitFor();
    await alice.evaluate(() => (window.__grusNoReload = true));
    const perCluster = alice.getByRole('table', { name: 'Replicas per cluster' });
    await perCluster.getByRole('cell', { name: CLUSTER }).waitFor({ timeout: 3 * WAIT });
    await alice.getByRole('button', { name: 'Set load' }).click();
    await alice.getByLabel('Request rate (requests per second)').fill('25');
    await alice.getByRole('dialog').getByRole('button', { name: 'Set load' }).click();
    await alice.getByText(/3 of 3 desired replicas ready/).waitFor({ timeout: 3 * WAIT });
    check(await alice.evaluate(() => window.__grusNoReload === true), 'the service scaled to 3 on its page without a reload');
    await shot(alice, 'service-scaled');
    await alice.goto(`${web}/services`);
    await alice.getByRole('row', { name: /chat/ }).getByText('3/3').waitFor();
    await shot(alice, 'services');

    // --- Draining a node: it takes no new work, and the audit log says who did it.
    await alice.goto(`${web}/clusters`);
    const nodes = alice.getByRole('region', { name: 'Cluster Simulated east' }).getByRole('grid');
    const drain = nodes.getByRole('button', { name: /^Drain node / }).first();
    const node = ((await drain.getAttribute('aria-label')) ?? '').replace('Drain node ', '');
    await drain.click();
    // It asks first; the question outlives the page's re-read of the cluster (every 10 s).
    const ask = alice.getByRole('dialog', { name: `Drain node ${node}?` });
    await ask.waitFor();
    await alice.waitForTimeout(11_000);
    await ask.getByRole('button', { name: 'Drain node' }).click();
    await alice.getByText(`Node ${node} draining`).waitFor();
    await nodes.getByRole('row', { name: new RegExp(node) }).getByText('draining').waitFor();
    check(true, `node ${node} drains from the clusters page`);
    await shot(alice, 'clusters-draining');
    await alice.goto(`${web}/admin`);
    const audit = alice.getByRole('region', { name: 'Audit log' });
    await audit.getByRole('row', { name: new RegExp(`node drain.*node/${CLUSTER}/${node}`) }).waitFor();
    check(true, 'the audit log records the drain');
    await alice.goto(`${web}/clusters`);
    await nodes.getByRole('button', { name: `Uncordon node ${node}` }).click();
    await alice.getByText(`Node ${node} takes new work again`).waitFor();

    // --- bob: a member of nlp is refused project vision and alice's job.
    await bob.goto(`${web}/projects/nlp`);
    await bob.getByRole('heading', { name: 'NLP' }).waitFor();
    await bob.getByRole('region', { name: 'Monthly budget' }).waitFor();
    const adminButtons = async () =>
      await bob.getByRole('button', { name: /Delete project|Save budget|Create queue|Set quota|Drain|Cordon|Retire|Download FOCUS/ }).count();
    check((await adminButtons()) === 0, 'a member sees no admin buttons on his project');
    await shot(bob, 'member-project');
    await bob.goto(`${web}/clusters`);
    await bob.getByRole('region', { name: 'Cluster Simulated east' }).getByRole('grid').waitFor();
    check((await adminButtons()) === 0, 'a member sees no cluster operations');
    await bob.goto(`${web}/billing`);
    await bob.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();
    check((await adminButtons()) === 0, 'a member is offered no FOCUS export');
    await bob.goto(`${web}/queue`);
    await bob.getByRole('heading', { name: 'Queue', level: 1 }).waitFor();
    await shot(bob, 'member-queue');
    await bob.goto(`${web}/projects/vision`);
    // Not there, or not his to see: the same not-found page (nothing to retry).
    const refusal = await bob.getByRole('region', { name: 'Not found' }).textContent();
    check(/no such project/i.test(refusal ?? ''), `bob is refused project vision: "${refusal}"`);
    await shot(bob, 'refused-project');
    await bob.goto(`${web}/jobs/${jobId}`);
    const refusedJob = await bob.getByRole('region', { name: 'Not found' }).textContent();
    check(/no such job/i.test(refusedJob ?? ''), `bob is refused alice's job: "${refusedJob}"`);
    check((await bob.getByRole('button', { name: 'Retry' }).count()) === 0, 'a missing job offers no retry');
    check((await bob.getByText('gang-train').count()) === 0, "nothing of alice's job shows for bob");
    await shot(bob, 'refused-job');

    // --- Every page at desktop and phone width.
    const everyPage = [
      ['overview', '/'],
      ['jobs', '/jobs?project=vision'],
      ['job', `/jobs/${jobId}`],
      ['queue', '/queue'],
      ['services', '/services'],
      ['service', '/services/vision/chat'],
      ['submit', '/submit?project=vision'],
      ['projects', '/projects'],
      ['project', '/projects/vision'],
      ['clusters', '/clusters'],
      ['billing', '/billing'],
      ['admin', '/admin'],
      ['not-found', '/no-such-page'],
    ];
    for (const [width, height, tag] of [
      [1366, 820, 'desktop'],
      [390, 844, 'phone'],
    ]) {
      await alice.setViewportSize({ width, height });
      for (const [name, url] of everyPage) {
        await alice.goto(`${web}${url}`);
        await alice.getByRole('heading', { level: 1 }).first().waitFor();
        await shot(alice, `${tag}-${name}`);
      }
    }
    await alice.setViewportSize({ width: 1366, height: 820 });

    // --- alice logs out: the portal session ends (the provider then asks to end its own).
    await alice.getByRole('button', { name: 'Log out' }).click();
    await alice.waitForURL((u) => u.toString().startsWith(issuer));
    const after = await alice.context().request.get(`${web}/auth/session`);
    check(after.status() === 401, `after logging out /auth/session answers ${after.status()}`);
  } catch (e) {
    for (const [i, p] of pages.entries()) {
      await p.screenshot({ path: path.join(artifacts, `failure-${i}.png`), fullPage: true }).catch(() => {});
    }
    throw e;
  } finally {
    await browser.close();
  }
  check(consoleErrors.length === 0, `no console errors${consoleErrors.length ? `: ${consoleErrors.join(' | ')}` : ''}`);
}

let code = 0;
let state;
try {
  await main();
  if (failures.length) code = 1;
} catch (e) {
  log('error:', e.stack ?? e);
  if (consoleErrors.length) log('console errors:', consoleErrors.join(' | '));
  code = 1;
} finally {
  for (const { name, child, out } of children.reverse()) {
    child.kill('SIGTERM');
    writeFileSync(path.join(artifacts, `${name.replace(/\W+/g, '-')}.log`), Buffer.concat(out));
  }
  await new Promise((r) => setTimeout(r, 500));
  if (state) rmSync(state, { recursive: true, force: true });
  try {
    psql(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  } catch (e) {
    log('could not drop the database:', e.message);
  }
  log(code === 0 ? 'passed' : `FAILED (${failures.join('; ') || 'error'})`, `— screenshots in ${artifacts}`);
  process.exit(code);
}
