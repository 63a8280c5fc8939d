import { test, expect } from '@playwright/test';
import { watchConsole, shot, Server, smallCluster, bigCluster, snapshotServer } from './helpers';

test('the workloads table lists misplaced and at-risk workloads of the demo', async ({ page }, testInfo) => {
  const problems = watchConsole(page);
  await page.goto('/workloads');
  const table = page.getByRole('table', { name: /Workloads and their findings/ });
  await expect(table).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: /\d+ workloads?/ })).toBeVisible();
  // By default only problems are listed.
  for (const row of await page.locator('tbody.workload').all()) {
    await expect(row).toHaveAttribute('data-state', /misplaced|at-risk/);
  }
  await shot(page, testInfo, 'workloads-demo');
  expect(problems).toEqual([]);
});

test.describe('on a snapshot', () => {
  let server: Server;
  test.beforeAll(async () => { server = await snapshotServer(smallCluster(true)); });
  test.afterAll(async () => { await server?.stop(); });

  test('a row opens its findings: explanation, rule documentation, fix as YAML to copy', async ({ page, context }, testInfo) => {
    const problems = watchConsole(page);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await page.goto(`${server.url}/workloads`);
    const row = page.locator('tbody.workload[data-workload="Pod/shop/report"]');
    await expect(row).toHaveCount(1);
    const toggle = row.getByRole('button', { name: /Pod\/shop\/report/ });
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await toggle.focus();
    await page.keyboard.press('Enter');
    await expect(toggle).toHaveAttribute('aria-expanded', 'true');
    const finding = row.locator('.finding[data-rule="windows-pod-without-os-selector"]');
    await expect(finding).toBeVisible();
    await expect(finding.locator('.message')).not.toBeEmpty();
    await expect(finding.getByRole('link', { name: 'windows-pod-without-os-selector' }))
      .toHaveAttribute('href', /\/docs\/rules\/windows-pod-without-os-selector\.md$/);
    const yaml = finding.locator('pre.yaml');
    await expect(yaml).toContainText('op: add');
    await expect(yaml).toContainText('kubernetes.io/os: windows');
    await finding.getByRole('button', { name: /Copy the fix/ }).click();
    await expect(finding.getByRole('button', { name: /Copy the fix/ })).toHaveText('Copied');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await yaml.textContent());
    await shot(page, testInfo, 'workload-expanded');
    expect(problems).toEqual([]);
  });

  test('filters narrow the table and live in the URL', async ({ page }) => {
    const problems = watchConsole(page);
    await page.goto(`${server.url}/workloads`);
    await expect(page.locator('tbody.workload[data-workload="Pod/web/nginx"]')).toHaveCount(1);
    await expect(page.locator('tbody.workload[data-workload="Pod/shop/checkout"]')).toHaveCount(0);
    await page.getByLabel('Namespace').selectOption('web');
    await expect(page).toHaveURL(/namespace=web/);
    await expect(page.locator('tbody.workload')).toHaveCount(1);
    await page.getByLabel('Namespace').selectOption('');
    await page.getByLabel('State').selectOption('misplaced');
    await expect(page.locator('tbody.workload[data-workload="Pod/legacy/iis-old"]')).toHaveCount(1);
    // Every row left is misplaced, once the table has re-rendered (a list taken mid-render can lose rows).
    await expect.poll(() => page.locator('tbody.workload').evaluateAll((rows) =>
      rows.map((r) => r.getAttribute('data-state')).filter((s) => s !== 'misplaced'))).toEqual([]);
    await page.getByLabel('State').selectOption('all');
    await page.getByLabel('OS').selectOption('linux');
    await expect(page.locator('tbody.workload[data-workload="Pod/kube-system/coredns"]')).toHaveCount(1);
    await expect(page.locator('tbody.workload[data-workload="Pod/shop/report"]')).toHaveCount(0);
    await page.goto(`${server.url}/workloads?severity=warning&state=all`);
    await expect(page.getByLabel('Severity')).toHaveValue('warning');
    for (const row of await page.locator('tbody.workload').all()) {
      await expect(row.locator('.counts')).toContainText('warning');
    }
    await page.goto(`${server.url}/workloads?rule=windows-pod-without-os-selector`);
    await expect(page.locator('tbody.workload[data-workload="Pod/shop/report"]')).toHaveCount(1);
    await expect(page.locator('tbody.workload[data-workload="Pod/web/nginx"]')).toHaveCount(0);
    expect(problems).toEqual([]);
  });
});

test.describe('on a snapshot of 450 workloads', () => {
  let server: Server;
  // 450 bare pods (each its own workload) on 20 nodes.
  test.beforeAll(async () => { server = await snapshotServer(bigCluster(20, 450)); });
  test.afterAll(async () => { await server?.stop(); });

  test('the server pages the table: one page of rows at a time, filters start again at the first', async ({ page }) => {
    const problems = watchConsole(page);
    await page.goto(`${server.url}/workloads?state=all`);
    const status = page.getByRole('status');
    await expect(status).toHaveText('450 workloads');
    const pager = page.getByRole('navigation', { name: 'Pages of workloads' });
    await expect(pager).toContainText('Showing 1–200 of 450');
    await expect(page.locator('tbody.workload')).toHaveCount(200);
    const first = await page.locator('tbody.workload').first().getAttribute('data-workload');
    await expect(pager.getByRole('button', { name: 'Previous page' })).toBeDisabled();
    await pager.getByRole('button', { name: 'Next page' }).click();
    await expect(pager).toContainText('Showing 201–400 of 450');
    await expect(page.locator(`tbody.workload[data-workload="${first}"]`)).toHaveCount(0);
    await pager.getByRole('button', { name: 'Next page' }).click();
    await expect(pager).toContainText('Showing 401–450 of 450');
    await expect(page.locator('tbody.workload')).toHaveCount(50);
    await expect(pager.getByRole('button', { name: 'Next page' })).toBeDisabled();
    // Worst first across pages: the last page holds no workload worse than the first page's last.
    const order = ['fine', 'at-risk', 'misplaced'];
    const lastStates = await page.locator('tbody.workload').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state')));
    await pager.getByRole('button', { name: 'Previous page' }).click();
    await expect(pager).toContainText('Showing 201–400 of 450');
    // The pager's words can change before the rows do: read the middle page once all 200 rows are drawn.
    const worstOfLast = Math.max(...lastStates.map((s) => order.indexOf(s!)));
    await expect.poll(async () => {
      const middleStates = await page.locator('tbody.workload').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state')));
      return middleStates.length === 200 ? Math.min(...middleStates.map((s) => order.indexOf(s!))) : -1;
    }).toBeGreaterThanOrEqual(worstOfLast);
    // A filter starts again at the first page, and its choices come from the server.
    const namespaces = await page.getByLabel('Namespace').locator('option').allTextContents();
    expect(namespaces).toContain('team-0');
    await page.getByLabel('Namespace').selectOption('team-3');
    await expect(page).toHaveURL(/namespace=team-3/);
    // The URL and the status can change before the rows do (the unfiltered count was a number of
    // workloads too): wait until the status says fewer than all, then read the rows once they are the
    // filtered ones.
    await expect(status).toHaveText(/^\d+ workloads?$/);
    await expect(status).not.toHaveText('450 workloads');
    await expect.poll(async () => {
      const rows = await page.locator('tbody.workload').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-workload')));
      return rows.length > 0 && rows.length <= 200 && rows.every((ns) => /^Pod\/team-3\//.test(ns ?? ''));
    }).toBe(true);
    expect(problems).toEqual([]);
  });
});
