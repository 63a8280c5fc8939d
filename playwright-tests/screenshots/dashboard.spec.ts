import { test, expect } from '@playwright/test';
import * as path from 'path';

// The overview of the embedded demo cluster, once its Windows builds and misplaced workloads are drawn.
test('docs/dashboard.png: the overview of the demo cluster', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByRole('heading', { level: 1, name: 'Overview' })).toBeVisible();
  await expect(page.locator('.group-count[data-build="10.0.20348"] .count')).toHaveText(/^\d+ nodes?$/);
  await expect(page.locator('li[data-state="misplaced"]')).toContainText(/misplaced\s+\d+/);
  await page.screenshot({ path: path.resolve(__dirname, '../../docs/dashboard.png') });
});
