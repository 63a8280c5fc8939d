import { test, expect } from '@playwright/test';
import * as path from 'path';

// docs/dashboard.md's picture: the workloads view of the demo in the dark scheme, one row opened by its link.
test('docs/dashboard-dark.png: the workloads view in the dark scheme', async ({ page }) => {
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto('/workloads');
  const first = page.locator('tbody.workload').first();
  await expect(first).toBeVisible();
  const key = await first.getAttribute('data-workload');
  const [kind, namespace, name] = (key ?? '').split('/');
  await page.goto(`/workloads/${namespace}/${kind}/${name}`);
  await expect(page.locator(`tbody.workload[data-workload="${key}"] .finding`).first()).toBeVisible();
  await page.screenshot({ path: path.resolve(__dirname, '../../docs/dashboard-dark.png') });
});
