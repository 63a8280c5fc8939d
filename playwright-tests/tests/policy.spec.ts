import { test, expect } from '@playwright/test';
import { watchConsole, shot } from './helpers';

test('the policy page links policy.wasm and turns settings into a ClusterAdmissionPolicy', async ({ page, context, baseURL }, testInfo) => {
  const problems = watchConsole(page);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  await page.goto('/policy');
  const download = page.getByRole('link', { name: 'Download policy.wasm' });
  await expect(download).toHaveAttribute('href', '/policy.wasm');
  const manifest = page.getByLabel('ClusterAdmissionPolicy manifest', { exact: true });
  await expect(manifest).toContainText('apiVersion: policies.kubewarden.io/v1');
  await expect(manifest).toContainText('kind: ClusterAdmissionPolicy');
  await expect(manifest).toContainText('module: registry://ghcr.io/winplace/policies/winplace:');
  await expect(manifest).toContainText('mutating: false');
  for (const resource of ['pods', 'deployments', 'statefulsets', 'daemonsets', 'jobs', 'cronjobs']) {
    await expect(manifest).toContainText(`- ${resource}`);
  }
  await expect(page.locator('.validation')).toHaveText('Settings are valid.');

  // The mutate box drives both the setting and the policy's `mutating`.
  await page.getByLabel('Mutate').check();
  await expect(manifest).toContainText('mutating: true');
  await expect(manifest).toContainText('mutate: true');
  await page.getByLabel('Exempt namespaces').fill('kube-system, monitoring');
  await expect(manifest).toContainText('exemptNamespaces:\n    - kube-system\n    - monitoring');
  // Build pinning (issue 25): range by default, exact for platforms that want the image's own build.
  await expect(manifest).toContainText('buildPinning: range');
  await page.getByLabel('Build pinning').selectOption('exact');
  await expect(manifest).toContainText('buildPinning: exact');

  // Settings::validate runs as you type and names the bad setting.
  await page.getByLabel('Supported Windows builds').fill('10.0.20348, 2022');
  await expect(page.locator('.validation')).toContainText('supportedBuilds[1]');
  await expect(page.locator('.validation')).toHaveAttribute('data-valid', 'false');
  await expect(manifest).toHaveCount(0);
  await page.getByLabel('Supported Windows builds').fill('10.0.20348');
  await page.getByLabel('Disabled rules').fill('no-such-rule');
  await expect(page.locator('.validation')).toContainText('disabledRules[0]');
  await page.getByLabel('Disabled rules').fill('deprecated-os-label');
  await expect(page.locator('.validation')).toHaveText('Settings are valid.');
  await expect(manifest).toContainText('- deprecated-os-label');

  await page.getByRole('button', { name: 'Copy the ClusterAdmissionPolicy manifest' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await manifest.textContent());
  await shot(page, testInfo, 'policy');
  expect(problems).toEqual([]);
});

test('policy.wasm behind the link is a WebAssembly module', async ({ request }) => {
  const response = await request.get('/policy.wasm');
  expect(response.status()).toBe(200);
  expect([...(await response.body()).subarray(0, 4)]).toEqual([0x00, 0x61, 0x73, 0x6d]);
});
