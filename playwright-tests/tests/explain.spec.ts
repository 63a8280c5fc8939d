import { test, expect } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import { watchConsole, shot, startServer, tempFile, writeJson } from './helpers';

// The snapshot of server/tests/explain.rs: a pod in CreateContainerError on a Windows Server 2019 node, and
// the Event that says why.
const failing = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../server/tests/data/incidents/cluster.json'), 'utf8'));
const quiet = {
  ...failing,
  items: failing.items
    .filter((o: any) => o.kind !== 'Event')
    .map((o: any) => (o.kind === 'Pod' ? { ...o, status: { phase: 'Running' } } : o)),
};

test('"Failing now" lists the incident as it arrives, and the playground explains a pasted error', async ({ page }, testInfo) => {
  const problems = watchConsole(page);
  const file = tempFile('cluster.json');
  writeJson(file, quiet);
  const server = await startServer(undefined, ['--snapshot', file, '--watch-snapshot']);
  try {
    await page.goto(`${server.url}/`);
    const failingNow = page.locator('section.failing-now');
    await expect(failingNow.locator('[data-incidents="0"]')).toBeVisible();
    // The pod starts failing: the live stream brings the incident without a reload.
    writeJson(file, failing);
    const incident = failingNow.locator('li.incident[data-object="Pod/billing/invoice-0"]');
    await expect(incident).toHaveAttribute('data-cause', 'build-mismatch', { timeout: 15_000 });
    await expect(incident).toContainText('×12');
    await expect(incident.locator('.incident-fix')).toContainText('aspnet:4.8-windowsservercore-ltsc2019');
    await expect(incident.locator('.incident-rule')).toContainText('windows-build-mismatch');
    await shot(page, testInfo, 'failing-now');

    // The workload's row counts the incident; opened, it asks the server for it and shows it.
    await page.goto(`${server.url}/workloads?state=all`);
    const row = page.locator('tbody.workload[data-workload="Pod/billing/invoice-0"]');
    await row.getByRole('button', { name: /Pod\/billing\/invoice-0/ }).click();
    const details = row.locator('tr.details');
    await expect(details.locator('h3.incidents-title')).toHaveText('Failing now');
    await expect(details.locator('li.incident[data-object="Pod/billing/invoice-0"]')).toHaveAttribute('data-cause', 'build-mismatch');
    await expect(details.locator('.finding').first()).toBeVisible();

    // The playground explains a pasted message in the browser: the sandbox case, then an unrelated one.
    await page.goto(`${server.url}/playground`);
    const field = page.locator('#explain-input');
    await field.fill('Warning  FailedCreatePodSandBox  37s  kubelet, w1  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod "kube-flannel-ds-windows-amd64-9tffg": Error response from daemon: hcsshim::CreateComputeSystem e20e: The container operating system does not match the host operating system.');
    const explained = page.locator('.explained-item');
    await expect(explained).toHaveAttribute('data-cause', 'build-mismatch');
    await expect(explained).toHaveAttribute('data-sandbox', 'true');
    await expect(explained).toContainText('pause (sandbox) image');
    await shot(page, testInfo, 'playground-explain');
    await field.fill('Last State: Terminated\n  Reason: OOMKilled');
    await expect(page.locator('.explained .no-match')).toBeVisible();
    expect(problems).toEqual([]);
  } finally {
    await server.stop();
  }
});

// The playground's explain follows its settings field, as `winplace explain --settings` does: with
// buildPinning exact the fix pins the node's one build with a nodeSelector, never a range of node affinity.
test("the playground's explain pins builds as its settings say", async ({ page }) => {
  const problems = watchConsole(page);
  await page.goto('/playground');
  // The pasted cluster: the Windows Server 2019 node of server/tests/data/incidents/cluster.json.
  const node = failing.items.find((o: any) => o.kind === 'Node' && o.metadata.labels?.['kubernetes.io/os'] === 'windows');
  await page.locator('input[name=context][value=pasted]').check();
  await page.locator('#context').fill(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [node] }));
  const describe = [
    'Name:         invoice-0',
    'Namespace:    billing',
    `Node:         ${node.metadata.name}/10.240.0.4`,
    'Events:',
    '  Warning  Failed  3s  kubelet  Failed to pull image "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022": rpc error: code = NotFound desc = failed to pull and unpack image "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022": no match for platform in manifest: not found',
  ].join('\n');
  await page.locator('#explain-input').fill(describe);
  const fix = page.locator('.explained-item .explained-fix');
  // The default settings: a range pin.
  await expect(page.locator('.explain-settings')).toHaveAttribute('data-pinning', 'range');
  await expect(fix).toContainText('required node affinity node.kubernetes.io/windows-build In [10.0.17763]');
  // buildPinning exact in the settings field: the node's one build as a nodeSelector.
  await page.locator('#settings').fill('buildPinning: exact\n');
  await expect(page.locator('.explain-settings')).toHaveAttribute('data-pinning', 'exact');
  await expect(fix).toContainText('pin the workload to that build with the nodeSelector node.kubernetes.io/windows-build: 10.0.17763 (setting buildPinning: exact)');
  await expect(fix).not.toContainText('node affinity');
  // Without context the signature's own range words are pinned exactly too.
  await page.locator('input[name=context][value=none]').check();
  await page.locator('#explain-input').fill('hcs::CreateComputeSystem web: The container operating system does not match the host operating system.');
  await expect(fix).toContainText("with the nodeSelector node.kubernetes.io/windows-build: <the node's build> (setting buildPinning: exact)");
  await expect(fix).not.toContainText('required node affinity');
  // A settings field that does not parse: the defaults (range) again, as the findings do.
  await page.locator('#settings').fill('buildPinning: loose\n');
  await expect(page.locator('.settings-error')).toContainText('buildPinning');
  await expect(page.locator('.explain-settings')).toHaveAttribute('data-pinning', 'range');
  await expect(fix).toContainText('required node affinity node.kubernetes.io/windows-build In [...]');
  expect(problems).toEqual([]);
});
