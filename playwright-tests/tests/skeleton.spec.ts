import { test, expect, Page } from '@playwright/test';

// Every console error or warning fails the test that caused it.
function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));
  return problems;
}

// The node list test moved to nodes.spec.ts (the node map replaced the list).

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
