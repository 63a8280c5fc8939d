import { test, expect } from '@playwright/test';
import { watchConsole, shot } from './helpers';

test('the rules page lists the catalogue by family with severities and documentation links', async ({ page }, testInfo) => {
  const problems = watchConsole(page);
  await page.goto('/rules');
  await expect(page.getByRole('heading', { level: 1, name: 'Rules' })).toBeVisible();
  for (const family of ['OS identity', 'Windows pods', 'Linux pods', 'RuntimeClass', 'API validation', 'Cluster', 'Live state']) {
    await expect(page.getByRole('heading', { level: 2, name: family, exact: true })).toBeVisible();
  }
  const row = page.locator('tr.rule[data-rule="windows-pod-without-os-selector"]');
  await expect(row.locator('.sev')).toHaveText('error');
  await expect(row.getByRole('link', { name: 'windows-pod-without-os-selector' }))
    .toHaveAttribute('href', 'https://github.com/winplace/winplace/blob/main/docs/rules/windows-pod-without-os-selector.md');
  await expect(page.locator('tr.rule[data-rule="deprecated-os-label"] .sev')).toHaveText('warning');
  expect(await page.locator('tr.rule').count()).toBeGreaterThan(30);
  // Counts of this cluster's findings arrive from the summary.
  await expect(row.locator('.rule-count')).toHaveText(/^\d+$/);
  await shot(page, testInfo, 'rules');
  expect(problems).toEqual([]);
});
