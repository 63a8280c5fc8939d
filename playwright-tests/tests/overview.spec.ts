import { test, expect } from '@playwright/test';
import { watchConsole, shot, Server, smallCluster, snapshotServer } from './helpers';

test('the overview names Windows builds, counts nodes and shows the data source (demo)', async ({ page }, testInfo) => {
  const problems = watchConsole(page);
  await page.goto('/');
  await expect(page.getByRole('heading', { level: 1, name: 'Overview' })).toBeVisible();
  const win = page.locator('.card', { has: page.getByRole('heading', { name: 'Windows nodes' }) });
  await expect(win.locator('.group-count[data-build="10.0.17763"]')).toContainText('Windows Server 2019');
  await expect(win.locator('.group-count[data-build="10.0.20348"]')).toContainText('Windows Server 2022');
  await expect(win.locator('.group-count[data-build="10.0.26100"]')).toContainText('Windows Server 2025');
  await expect(win.locator('.group-count[data-build="10.0.20348"] .count')).toHaveText(/^\d+ nodes?$/);
  await expect(page.locator('[data-count="linux-nodes"]')).toHaveText(/^[1-9]\d*$/);
  // Misplaced and at-risk workloads, and findings by severity.
  await expect(page.locator('li[data-state="misplaced"]')).toContainText(/misplaced\s+\d+/);
  await expect(page.locator('li[data-state="at-risk"]')).toContainText(/at risk\s+\d+/);
  await expect(page.locator('li[data-severity="error"]')).toContainText(/error\s+\d+/);
  // The data's source and freshness sit in the header.
  await expect(page.locator('header .source .badge')).toHaveText('demo');
  await expect(page.locator('header .freshness')).toContainText('revision');
  await shot(page, testInfo, 'overview-demo');
  await expect(page.locator('header .watch-error')).toHaveCount(0);
  await expect(page.locator('header .behind')).toHaveCount(0);
  // A live source in trouble: the words the server gives (`Freshness.error`, `behind`; server/tests/live.rs
  // checks that it gives them) reach the header, through the page's own fetch.
  await page.route('**/api/summary', async (route) => {
    const answer = await (await route.fetch()).json();
    answer.meta.freshness.error = 'cannot list pods: 403 Forbidden — the ClusterRole needs list and watch on pods';
    answer.meta.freshness.behind = 1234;
    await route.fulfill({ json: answer });
  });
  await page.reload();
  await expect(page.locator('header .watch-error')).toHaveText(
    'watch failing: cannot list pods: 403 Forbidden — the ClusterRole needs list and watch on pods');
  await expect(page.locator('header .behind')).toHaveText('catching up: 1234 events behind');
  expect(problems).toEqual([]);
});

test('the build matrix says, per image build and node build, compatible or not, with counts (demo)', async ({ page }) => {
  const problems = watchConsole(page);
  await page.goto('/');
  const matrix = page.getByRole('table', { name: /image builds/ });
  await expect(matrix).toBeVisible();
  const cells = matrix.locator('td[data-compatible]');
  expect(await cells.count()).toBeGreaterThan(0);
  for (const cell of await cells.all()) {
    const compatible = await cell.getAttribute('data-compatible');
    const disputed = await cell.getAttribute('data-disputed');
    await expect(cell.locator('.verdict')).toHaveText(compatible === 'true' ? /compatible/ : disputed === 'true' ? /disputed/ : /incompatible/);
    await expect(cell.locator('.pods')).toHaveText(/^\d+ pods?$/);
  }
  // Process isolation: a 2022 host cannot run a 2019 image.
  const cell = matrix.locator('td[data-image="10.0.17763"][data-node="10.0.20348"]');
  if (await cell.count()) await expect(cell).toHaveAttribute('data-compatible', 'false');
  expect(problems).toEqual([]);
});

test.describe('on a snapshot', () => {
  let server: Server;
  test.beforeAll(async () => { server = await snapshotServer(smallCluster(true)); });
  test.afterAll(async () => { await server?.stop(); });

  test('the overview counts the snapshot and says it is a snapshot', async ({ page }, testInfo) => {
    const problems = watchConsole(page);
    await page.goto(`${server.url}/`);
    await expect(page.locator('header .source .badge')).toHaveText('snapshot');
    await expect(page.locator('[data-count="windows-nodes"]')).toHaveText('3');
    await expect(page.locator('[data-count="linux-nodes"]')).toHaveText('2');
    await expect(page.locator('.group-count[data-build="10.0.20348"] .count')).toHaveText('2 nodes');
    await expect(page.locator('.group-count[data-build="10.0.17763"] .count')).toHaveText('1 node');
    await expect(page.locator('li[data-state="misplaced"]')).toContainText(/misplaced\s+[1-9]/);
    await expect(page.locator('li[data-state="at-risk"]')).toContainText(/at risk\s+[1-9]/);
    await shot(page, testInfo, 'overview-snapshot');
    expect(problems).toEqual([]);
  });
});
