import { test, expect, Page } from '@playwright/test';

// Every console error or warning fails the test that caused it.
function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));
  return problems;
}

test('the node list shows the demo cluster grouped by OS and Windows build', async ({ page }) => {
  const problems = watchConsole(page);
  await page.goto('/');
  const groups = page.locator('.node-group');
  await expect(groups).toHaveCount(4);
  await expect(page.locator('.node-group[data-build="10.0.17763"] h3')).toContainText('Windows Server 2019');
  await expect(page.locator('.node-group[data-build="10.0.20348"] h3')).toContainText('Windows Server 2022');
  await expect(page.locator('.node-group[data-build="10.0.26100"] h3')).toContainText('Windows Server 2025');
  await expect(page.locator('.node-group[data-os="linux"] .node')).toHaveCount(3);
  await expect(page.locator('[data-node="aks-win22-0"]')).toContainText('os=windows:NoSchedule');
  await expect(page.locator('.source .badge')).toHaveText('demo');
  expect(problems).toEqual([]);
});

test('policy.wasm downloads as a WebAssembly module', async ({ page, request }) => {
  const response = await request.get('/policy.wasm');
  expect(response.status()).toBe(200);
  expect(response.headers()['content-type']).toBe('application/wasm');
  const body = await response.body();
  expect([...body.subarray(0, 4)]).toEqual([0x00, 0x61, 0x73, 0x6d]);
  await page.goto('/');
  const valid = await page.evaluate(async () => {
    const bytes = await (await fetch('/policy.wasm')).arrayBuffer();
    return WebAssembly.validate(bytes);
  });
  expect(valid).toBe(true);
});

test('the playground runs windows-pod-without-os-selector in the browser', async ({ page }) => {
  const problems = watchConsole(page);
  await page.goto('/playground');
  const unpinned = [
    'apiVersion: apps/v1', 'kind: Deployment', 'metadata: {name: web, namespace: shop}', 'spec:',
    '  template:', '    spec:', '      containers:', '      - name: web',
    '        image: mcr.microsoft.com/windows/servercore:ltsc2022', '',
  ].join('\n');
  await page.getByLabel('Paste Kubernetes manifests').fill(unpinned);
  const finding = page.locator('.finding[data-rule="windows-pod-without-os-selector"]');
  await expect(finding).toHaveCount(1);
  await expect(finding).toContainText('line 6');
  const pinned = unpinned.replace('    spec:\n', '    spec:\n      nodeSelector: {kubernetes.io/os: windows}\n');
  await page.getByLabel('Paste Kubernetes manifests').fill(pinned);
  await expect(finding).toHaveCount(0);
  expect(problems).toEqual([]);
});
