import { test, expect } from '@playwright/test';

// Benchmark (not part of the test command): policy.wasm hosted in Chromium by the playground's Admission
// view. Figures: module compile + first answer on the page's first visit and on the next (the module is
// compiled once per page), and per-request `validate` latency for a Deployment, p50 / p99 over 300
// requests (the page's own measure around each waPC call: data-ms).
// Run: `npx playwright test -c bench.config.ts -g "admission"`.
const N = 300;

function deployments(n: number): string {
  return Array.from({ length: n }, (_, i) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-${i}
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: "10.0.20348"}
      tolerations: [{key: os, value: windows, effect: NoSchedule}]
      containers:
      - name: iis
        image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022
`).join('---\n');
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

test('admission: policy.wasm in Chromium, compile once, p50/p99 per Deployment', async ({ page }) => {
  await page.goto('/playground');
  await page.locator('#manifest').fill(deployments(1));
  const t0 = Date.now();
  await page.locator('#tab-admission').click();
  await expect(page.locator('.admission-result .verdict')).toHaveCount(1, { timeout: 60_000 });
  const first = Date.now() - t0;
  // Back to findings and again: the compiled module is reused.
  await page.locator('#tab-findings').click();
  const t1 = Date.now();
  await page.locator('#tab-admission').click();
  await expect(page.locator('.admission-result .verdict')).toHaveCount(1);
  const again = Date.now() - t1;

  await page.locator('#manifest').fill(deployments(N));
  await expect(page.locator('.admission-result .verdict')).toHaveCount(N, { timeout: 120_000 });
  const ms = (await page.locator('.admission-result').evaluateAll((els) =>
    els.map((e) => Number((e as HTMLElement).dataset.ms)))).slice(10).sort((a, b) => a - b);
  console.log(`admission view: first answer ${first} ms (fetch + streaming compile + instantiate), `
    + `again ${again} ms (compiled module reused); validate per Deployment over ${ms.length} requests: `
    + `p50 ${quantile(ms, 0.5).toFixed(3)} ms, p99 ${quantile(ms, 0.99).toFixed(3)} ms`);
});
