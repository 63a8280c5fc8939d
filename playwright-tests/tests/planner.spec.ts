import { test, expect } from '@playwright/test';
import { watchConsole, shot } from './helpers';

// The planner computes `winplace what-if` in the browser: pools off, pools added, infrastructure files pasted.
test('retiring the 2019 pool for a 2025 one breaks the 2019 app, and the link reproduces the plan', async ({ page, context }, testInfo) => {
  const problems = watchConsole(page);
  await page.goto('/planner');
  await expect(page.getByRole('heading', { level: 1, name: 'Planner' })).toBeVisible();
  for (const pool of ['linux', 'win19', 'win22']) {
    await expect(page.locator(`.planner-pools tr[data-pool="${pool}"]`)).toBeVisible();
  }
  await expect(page.locator('.planner-none')).toBeVisible();

  await page.getByLabel('keep pool win19').uncheck();
  const invoice = page.locator('.planner-changes li[data-object="Deployment/billing/invoice-api"]');
  await expect(invoice).toHaveAttribute('data-verdict', 'breaks');
  await expect(invoice).toContainText('no-schedulable-node');
  await expect(page.locator('.planner-matrix tr[data-build="10.0.17763"] td.after')).toHaveText('0');

  await page.getByRole('button', { name: 'Add pool' }).click();
  await expect(page.locator('.planner-pools tr.added[data-pool="win25"]')).toBeVisible();
  await expect(page.locator('.planner-matrix tr[data-build="10.0.26100"] td.after')).toHaveText('2');
  await expect(invoice.locator('.fixes')).toContainText('aspnet:4.8-windowsservercore-ltsc2025');
  // The 2022 app is not touched.
  await expect(page.locator('.planner-changes li[data-object="Deployment/web/portal"]')).toHaveCount(0);
  await shot(page, testInfo, 'planner');

  // The address is the plan.
  const shared = await context.newPage();
  await shared.goto(page.url());
  await expect(shared.getByLabel('keep pool win19')).not.toBeChecked();
  await expect(shared.locator('.planner-pools tr.added[data-pool="win25"]')).toBeVisible();
  await expect(shared.locator('.planner-changes li[data-object="Deployment/billing/invoice-api"]')).toHaveAttribute('data-verdict', 'breaks');
  expect(problems).toEqual([]);
});

test('a pasted GKE node pool list becomes the cluster, with its Windows taint', async ({ page }) => {
  const problems = watchConsole(page);
  await page.goto('/planner');
  const gke = JSON.stringify([
    { name: 'default-pool', config: { machineType: 'e2-medium', imageType: 'COS_CONTAINERD' }, initialNodeCount: 2, version: '1.30.5-gke.1' },
    { name: 'win-pool', config: { machineType: 'n1-standard-2', imageType: 'WINDOWS_LTSC_CONTAINERD', windowsNodeConfig: { osVersion: 'OS_VERSION_LTSC2022' } }, initialNodeCount: 1, version: '1.30.5-gke.1' },
  ]);
  await page.locator('.planner-cluster').fill(gke);
  await expect(page.locator('.planner-pools tr[data-pool="win-pool"]')).toContainText('windows 10.0.20348');
  await expect(page.locator('.planner-pools tr[data-pool="default-pool"]')).toContainText('2');
  // The sample's 2019 app had no 2019 node to begin with; the 2022 app tolerates os=windows, not GKE's taint.
  await page.getByLabel('keep pool win-pool').uncheck();
  await expect(page.locator('.planner-matrix tr[data-build="10.0.20348"] td.after')).toHaveText('0');
  await page.locator('.planner-cluster').fill('apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n');
  await expect(page.locator('.planner-problems .problem')).toContainText('no Nodes, RuntimeClasses or node pools');
  expect(problems).toEqual([]);
});

// The two upgrade controls (what they compute is planner.rs's unit test): a Windows pool upgraded in place
// breaks the app pinned to exactly 10.0.20348; a date reads the retirement calendar (AKS retired Windows Server
// 2019 on 2026-03-01, docs/reference/lifecycle.md A1); the address keeps both.
test('a pool upgraded in place and a date on the calendar', async ({ page, context }) => {
  const problems = watchConsole(page);
  await page.goto('/planner');
  await expect(page.locator('.planner-pools tr[data-pool="linux"] select')).toHaveCount(0);
  await page.getByLabel('upgrade pool win22 in place').selectOption('10.0.26100');
  await expect(page.locator('.planner-changes li[data-object="Deployment/web/portal"]')).toHaveAttribute('data-verdict', 'breaks');
  await expect(page.locator('.planner-retirements')).toHaveCount(0);

  await page.getByLabel('Date').fill('2026-03-02');
  const retired = page.locator('.planner-retirements li[data-build="10.0.17763"]');
  await expect(retired).toContainText('2026-03-01');
  await expect(retired.locator('.source')).toContainText('lifecycle.md A1');

  const shared = await context.newPage();
  await shared.goto(page.url());
  await expect(shared.getByLabel('upgrade pool win22 in place')).toHaveValue('10.0.26100');
  await expect(shared.getByLabel('Date')).toHaveValue('2026-03-02');
  await expect(shared.locator('.planner-changes li[data-object="Deployment/billing/invoice-api"]')).toHaveAttribute('data-verdict', 'breaks');
  expect(problems).toEqual([]);
});
